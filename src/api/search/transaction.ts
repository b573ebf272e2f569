import { AppError } from "../../core/index.ts";
import { parseTimestampUs } from "../../core/index.ts";
import type { TableDef } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { normalizeTransactionRange, type SettingsStore, type TransactionRange } from "../../settings/index.ts";
import { windowMs } from "../openapi/schemas.ts";
import { splitValues } from "./filters.ts";
import type { Gathered, NodeReport, OverNodes } from "./fan-out.ts";
import { noLakeError } from "./no-lake.ts";
import type { TransactionMessage } from "./model.ts";
import type { SearchService } from "./service.ts";
import { timeShiftNote, type TimeShiftNote } from "./time-shift.ts";
import { hepTableKey } from "../../core/protocols.ts";
import { type CallRow, type CallRows, type CallRowsKind, localCallRows } from "./call-rows.ts";

export { type CallRow, type CallRows, type CallRowsKind, localCallRows } from "./call-rows.ts";

/**
 * The transaction window (docs/API.md "Users and settings"; docs/ADMIN.md
 * "Call view time window"): the selected messages are looked for in the request's time range
 * widened by `message_from`/`message_to`, then every message of the selected call(s) is read from
 * first-row time + `from` to last-row time + `to` (the user's transaction.range setting, default
 * ±5 min each), with the other legs found without user scripting: correlation ids (X-CID / configured headers, stored in `cid`) in both directions and
 * B2BUA Call-ID suffixes, iterated until no new Call-ID appears.
 */
export interface TransactionRequest {
  sessionIds: string[];
  protoType: number;
  eventType: string;
  /** Where to look for the selected rows (epoch ms); defaults to the last 7 days. */
  fromMs?: number;
  toMs?: number;
  /** Despite the name: IPs to EXCLUDE (docs/API.md "Exports and share links"). */
  excludeIps: string[];
  username: string;
}

export interface TransactionResult {
  items: TransactionMessage[];
  keys: string[];
  sessions: string[];
  window: { from_ms: number; to_ms: number };
  /** Where the selected messages were looked for: the request's range widened by message_from/message_to. */
  lookup: { from_ms: number; to_ms: number };
  hosts: Array<{ ip: string; alias: string | null }>;
  /** Set when some message's time was shifted at ingest (docs/CALL-VIEW.md "Shifted times"). */
  time_shift: TimeShiftNote | null;
  /** Over coordinator.nodes: what each node did over every question of the call view. */
  nodes?: NodeReport[];
  partial?: boolean;
}

/**
 * What each node did over the several questions of one call view: the worst outcome (failed or
 * timeout over ok over skipped), rows and milliseconds added.
 */
export class NodeAcc {
  private readonly byName = new Map<string, NodeReport>();
  private any = false;

  /** Starting from what the nodes did for the call's messages (TransactionResult.nodes), when it has it. */
  constructor(from?: { nodes?: NodeReport[] }) {
    if (from?.nodes) this.add({ answers: [], nodes: from.nodes, partial: false });
  }

  add(g: Gathered<unknown>): void {
    this.any = true;
    const rank = { skipped: 0, ok: 1, timeout: 2, failed: 3 } as const;
    for (const r of g.nodes) {
      const was = this.byName.get(r.name);
      if (!was) {
        this.byName.set(r.name, { ...r });
        continue;
      }
      const worse = rank[r.status] > rank[was.status] ? r : was;
      this.byName.set(r.name, { ...worse, rows: was.rows + r.rows, ms: was.ms + r.ms });
    }
  }

  meta(): { nodes?: NodeReport[]; partial?: boolean } {
    if (!this.any) return {};
    const nodes = [...this.byName.values()];
    return { nodes, partial: nodes.some((r) => r.status === "failed" || r.status === "timeout") };
  }
}

const DAY_MS = 86_400_000;
/** The tables a call view reads. */
export const CALL_TABLES = [hepTableKey(1, "call"), hepTableKey(1, "default")];

export interface CorrelationConfig {
  headers: readonly string[];
  b2buaSuffixes: readonly string[];
}

export class TransactionService {
  constructor(
    /** Undefined on a coordinator without a lake: the rows come from coordinator.nodes only. */
    private readonly lake: Lake | undefined,
    private readonly settings: SettingsStore,
    private readonly search: SearchService,
    private readonly correlation: CorrelationConfig,
    private readonly timeoutMs: number,
    /** coordinator.query.max_result_bytes: the JSON of all rows of one call view at most (413 beyond). */
    private readonly maxResultBytes = Number.POSITIVE_INFINITY,
    /** coordinator.nodes: the call's rows are read from every node (docs/ARCHITECTURE.md "Reads over several nodes"). */
    private readonly over?: OverNodes,
  ) {}

  /** Table definitions a node sent with its rows, for a table this lake has not defined (yet). */
  private readonly defs = new Map<string, TableDef>();

  /** The user's transaction.range; a missing or out-of-range member keeps its default (docs/API.md "Users and settings"). */
  private range(username: string): TransactionRange {
    const s = this.settings.userSettings
      .list(username)
      .find((x) => x.category === "transaction" && x.param === "range");
    return normalizeTransactionRange(s?.data);
  }

  private tablesFor(protoType: number, eventType: string): string[] {
    if (protoType !== 1) return [hepTableKey(protoType)];
    if (eventType === "registration") return [hepTableKey(1, "registration")];
    return CALL_TABLES;
  }

  /**
   * Rows of `tables` in [fromUs, toUs] whose session_id or cid is in `ids`: of this lake, or over
   * coordinator.nodes the union of every node's (docs/ARCHITECTURE.md "Reads over several nodes"),
   * so the anchor, the correlation rounds and the rows are those of one lake holding every leg.
   */
  private async rowsFor(
    tables: string[],
    ids: string[],
    fromUs: number,
    toUs: number,
    kind: CallRowsKind,
    acc: NodeAcc,
  ): Promise<CallRow[]> {
    if (!this.over) return (await this.localRows(tables, ids, fromUs, toUs, kind)).rows;
    if (ids.length === 0) return [];
    const g = await this.over.gather<CallRows>({
      read: "call",
      path: "/api/v1/transactions/rows",
      window: { fromMs: Math.floor(fromUs / 1000), toMs: Math.ceil(toUs / 1000) },
      body: (bufferOnly) => ({
        tables,
        ids,
        from_us: fromUs,
        to_us: toUs,
        kind,
        ...(bufferOnly ? { buffer_only: true } : {}),
      }),
      ...(this.lake ? { local: () => this.localRows(tables, ids, fromUs, toUs, kind) } : {}),
      rows: (v) => v.rows.length,
    });
    acc.add(g);
    for (const a of g.answers)
      for (const [key, def] of Object.entries(a.value.defs ?? {})) if (!this.defs.has(key)) this.defs.set(key, def);
    return g.answers.flatMap((a) => a.value.rows);
  }

  localRows(tables: string[], ids: string[], fromUs: number, toUs: number, kind: CallRowsKind): Promise<CallRows> {
    if (!this.lake) throw noLakeError("the call view without coordinator.nodes");
    return localCallRows(
      this.lake,
      { timeoutMs: this.timeoutMs, maxResultBytes: this.maxResultBytes },
      { tables, ids, fromUs, toUs, kind },
    );
  }

  /** Call-IDs a B2BUA may have derived from `id` (suffix added or removed). */
  private b2buaVariants(id: string): string[] {
    const out: string[] = [];
    for (const s of this.correlation.b2buaSuffixes) {
      if (!s) continue;
      out.push(id + s);
      if (id.endsWith(s) && id.length > s.length) out.push(id.slice(0, -s.length));
    }
    return out;
  }

  async messages(req: TransactionRequest): Promise<TransactionResult> {
    const acc = new NodeAcc();
    const selected = [...new Set(req.sessionIds.flatMap((s) => splitValues(s)))];
    if (selected.length === 0)
      throw new AppError("VALIDATION", "session_id is required", { details: { fields: ["session_id"] } });
    const tables = this.tablesFor(req.protoType, req.eventType);
    const range = this.range(req.username);
    // 1. Anchor: the selected rows give the window. They are looked for in the request's range
    // widened by message_from/message_to, so a row found near the edge of a search still brings
    // the messages of its call just outside it.
    // windowMs keeps the widened bounds inside what the lake can print (years 1970 to 9999).
    const lookFrom = windowMs((req.fromMs ?? Date.now() - 7 * DAY_MS) + range.message_from) * 1000;
    const lookTo = windowMs((req.toMs ?? Date.now() + 60_000) + range.message_to) * 1000;
    const anchor = await this.rowsFor(tables, selected, lookFrom, lookTo, "anchor", acc);
    if (anchor.length === 0)
      throw new AppError("NOT_FOUND", `no messages for ${selected.join(", ")} in the given time range`);
    const tsList = anchor.map((r) => Number(r.ts));
    const fromUs = Math.min(...tsList) + range.from * 1000;
    const toUs = Math.max(...tsList) + range.to * 1000;
    // 2. Correlate other legs inside the window until nothing new appears.
    const sessions = new Set(selected);
    let frontier = [...selected];
    for (let round = 0; round < 4 && frontier.length > 0; round++) {
      const probe = [...new Set([...frontier, ...frontier.flatMap((id) => this.b2buaVariants(id))])];
      const found = await this.rowsFor(tables, probe, fromUs, toUs, "correlate", acc);
      const next: string[] = [];
      for (const r of found) {
        for (const v of [r.session_id, r.cid]) {
          if (typeof v === "string" && v !== "" && !sessions.has(v)) {
            sessions.add(v);
            next.push(v);
          }
        }
      }
      frontier = next;
    }
    // 3. Every message of every session in the window, oldest first.
    const rows = await this.rowsFor(tables, [...sessions], fromUs, toUs, "all", acc);
    const exclude = new Set(req.excludeIps);
    const kept = rows.filter((r) => !exclude.has(String(r.src_ip)) && !exclude.has(String(r.dst_ip)));
    const seen = new Set<string>();
    const unique = kept.filter((r) => {
      const u = String(r.uuid);
      if (seen.has(u)) return false;
      seen.add(u);
      return true;
    });
    // Capture time, then the id: a UUIDv7 that follows the order rows were received in, also
    // across ingest threads (docs/ARCHITECTURE.md "Several ingest threads").
    // Times as numbers: a row read by page and one read by DuckDB may print the same time
    // differently (trailing zeros of the fraction).
    const us = (r: CallRow) => parseTimestampUs(String(r.timestamp)) ?? 0;
    unique.sort((a, b) => us(a) - us(b) || String(a.uuid).localeCompare(String(b.uuid)));
    const items = unique.map((r, i) => {
      const def = this.lake?.table(r.__table) ?? this.defs.get(r.__table)!;
      const { __table, ...rest } = r;
      const usRow = { ...rest, timestamp: parseTimestampUs(String(rest.timestamp)) };
      // A row of a HEP table (src/ingest/hep/tables.ts) as the search gives it: the members the
      // schema names (TransactionMessageSchema), which the route's response check enforces.
      return this.search.toItem(usRow, i, def, __table) as TransactionMessage;
    });
    items.sort((a, b) => Number(a.timestamp_us) - Number(b.timestamp_us));
    items.forEach((it, i) => (it.id = i + 1));
    const ips = new Set<string>();
    for (const it of items) {
      if (typeof it.src_ip === "string") ips.add(it.src_ip);
      if (typeof it.dst_ip === "string") ips.add(it.dst_ip);
    }
    return {
      items,
      keys: items[0] ? Object.keys(items[0]) : [],
      sessions: [...sessions],
      window: { from_ms: Math.floor(fromUs / 1000), to_ms: Math.ceil(toUs / 1000) },
      lookup: { from_ms: Math.floor(lookFrom / 1000), to_ms: Math.ceil(lookTo / 1000) },
      hosts: [...ips].map((ip) => ({ ip, alias: this.settings.aliases.resolveAlias(ip) ?? null })),
      time_shift: timeShiftNote(items),
      ...acc.meta(),
    };
  }
}
