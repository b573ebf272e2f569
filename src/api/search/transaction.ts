import { AppError } from "../../core/index.ts";
import { parseTimestampUs } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { normalizeTransactionRange, type SettingsStore, type TransactionRange } from "../../settings/index.ts";
import { windowMs } from "../openapi/schemas.ts";
import { splitValues } from "./filters.ts";
import type { SearchService } from "./service.ts";
import { timeShiftNote, type TimeShiftNote } from "./time-shift.ts";

/**
 * The transaction window (spec doc 1 "Users and settings", "Transactions and messages"; docs/ADMIN.md
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
  /** Despite the name: IPs to EXCLUDE (spec doc 1). */
  excludeIps: string[];
  username: string;
}

export interface TransactionResult {
  items: Record<string, unknown>[];
  keys: string[];
  sessions: string[];
  window: { from_ms: number; to_ms: number };
  /** Where the selected messages were looked for: the request's range widened by message_from/message_to. */
  lookup: { from_ms: number; to_ms: number };
  hosts: Array<{ ip: string; alias: string | null }>;
  /** Set when some message's time was shifted at ingest (docs/CALL-VIEW.md "Shifted times"). */
  time_shift: TimeShiftNote | null;
}

const DAY_MS = 86_400_000;
const CALL_TABLES = ["main.hep_proto_1_call", "main.hep_proto_1_default"];

export interface CorrelationConfig {
  headers: readonly string[];
  b2buaSuffixes: readonly string[];
}

export class TransactionService {
  constructor(
    private readonly lake: Lake,
    private readonly settings: SettingsStore,
    private readonly search: SearchService,
    private readonly correlation: CorrelationConfig,
    private readonly timeoutMs: number,
    /** coordinator.query.max_result_bytes: the JSON of all rows of one call view at most (413 beyond). */
    private readonly maxResultBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** The user's transaction.range; a missing or out-of-range member keeps its default (spec doc 1). */
  private range(username: string): TransactionRange {
    const s = this.settings.userSettings.list(username).find((x) => x.category === "transaction" && x.param === "range");
    return normalizeTransactionRange(s?.data);
  }

  private tablesFor(protoType: number, eventType: string): string[] {
    if (protoType !== 1) return [`main.hep_proto_${protoType}_default`];
    if (eventType === "registration") return ["main.hep_proto_1_registration"];
    return CALL_TABLES;
  }

  /**
   * Rows of `tables` in [fromUs, toUs] whose session_id or cid is in `ids`. Every statement is
   * streamed under what is left of one byte budget for all of them, so a call of millions of
   * messages (or thousands of Call-IDs) is a 413, never the whole window in memory.
   */
  private async rowsFor(tables: string[], ids: string[], fromUs: number, toUs: number, columns: string): Promise<Array<Record<string, unknown> & { __table: string }>> {
    const out: Array<Record<string, unknown> & { __table: string }> = [];
    if (ids.length === 0) return out;
    let left = this.maxResultBytes;
    const ph = ids.map((_x, i) => `$${i + 3}`).join(", ");
    for (const key of tables) {
      if (!this.lake.table(key)) continue;
      // One statement per column, not `session_id IN … OR cid IN …`: an OR across two columns
      // stays a filter above the Parquet scan, which then reads every row of the window; alone,
      // each condition is pushed into the scan (row-group min/max, bloom filters), and files whose
      // statistics rule the ids out (or whose cid is NULL throughout) are not listed at all.
      // A row matched by both comes back twice; callers key rows by uuid.
      for (const column of ["session_id", "cid"]) {
        const scan = await this.lake.scanSql(key, { fromUs, toUs, equals: { column, values: ids } });
        const r = await this.lake.query(
          `SELECT ${columns} FROM (${scan}) t WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND ${column} IN (${ph})`,
          [fromUs, toUs, ...ids],
          { timeoutMs: this.timeoutMs, maxResultBytes: left, narrowHint: "narrow the time range or select fewer Call-IDs" },
        );
        left -= r.bytes ?? 0;
        for (const row of r.rows) out.push({ ...row, __table: key });
      }
    }
    return out;
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
    const selected = [...new Set(req.sessionIds.flatMap((s) => splitValues(s)))];
    if (selected.length === 0) throw new AppError("VALIDATION", "session_id is required", { details: { fields: ["session_id"] } });
    const tables = this.tablesFor(req.protoType, req.eventType);
    const range = this.range(req.username);
    // 1. Anchor: the selected rows give the window. They are looked for in the request's range
    // widened by message_from/message_to, so a row found near the edge of a search still brings
    // the messages of its call just outside it.
    // windowMs keeps the widened bounds inside what the lake can print (years 1970 to 9999).
    const lookFrom = windowMs((req.fromMs ?? Date.now() - 7 * DAY_MS) + range.message_from) * 1000;
    const lookTo = windowMs((req.toMs ?? Date.now() + 60_000) + range.message_to) * 1000;
    const anchor = await this.rowsFor(tables, selected, lookFrom, lookTo, `epoch_us("timestamp") AS ts`);
    if (anchor.length === 0) throw new AppError("NOT_FOUND", `no messages for ${selected.join(", ")} in the given time range`);
    const tsList = anchor.map((r) => Number(r.ts));
    const fromUs = Math.min(...tsList) + range.from * 1000;
    const toUs = Math.max(...tsList) + range.to * 1000;
    // 2. Correlate other legs inside the window until nothing new appears.
    const sessions = new Set(selected);
    let frontier = [...selected];
    for (let round = 0; round < 4 && frontier.length > 0; round++) {
      const probe = [...new Set([...frontier, ...frontier.flatMap((id) => this.b2buaVariants(id))])];
      const found = await this.rowsFor(tables, probe, fromUs, toUs, "session_id, cid");
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
    const cols = `*`;
    const rows = await this.rowsFor(tables, [...sessions], fromUs, toUs, cols);
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
    unique.sort((a, b) => String(a.timestamp).localeCompare(String(b.timestamp)) || String(a.uuid).localeCompare(String(b.uuid)));
    const items = unique.map((r, i) => {
      const def = this.lake.table(r.__table)!;
      const { __table, ...rest } = r;
      const usRow = { ...rest, timestamp: parseTimestampUs(String(rest.timestamp)) };
      return this.search.toItem(usRow, i, def, __table);
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
    };
  }
}
