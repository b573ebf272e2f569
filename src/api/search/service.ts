import type { Config } from "../../config/index.ts";
import { AppError, type TableDef } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { buildWhere, type VirtualField } from "./filters.ts";

/**
 * Search over the HEP tables (spec doc 1 "Search results", doc 2 "Storage configuration"):
 * time-pruned scans from the catalog, newest-first top-N strategies, lazy payload hydration.
 */
export interface SearchRequest {
  protoType: number;
  eventType: string;
  filter: Record<string, unknown>;
  fromMs: number;
  toMs: number;
  limit: number;
}

export interface SearchResult {
  items: Record<string, unknown>[];
  keys: string[];
  limit: number;
  total: number;
  table: string | null;
}

export type LakeSearchConfig = Config["storage"]["lakehouse"]["search"];

const HEAVY = new Set(["payload", "data_extra"]);
const HOUR_MS = 3_600_000;

export function tableKeyFor(protoType: number, eventType: string): string | undefined {
  if (protoType === 1) {
    const p = eventType || "call";
    if (p !== "call" && p !== "registration" && p !== "default") throw new AppError("VALIDATION", `event_type "${eventType}" is not call, registration or default`, { details: { fields: ["filter.event_type"] } });
    return `main.hep_proto_1_${p}`;
  }
  if (protoType === 300) {
    const m = /^([A-Za-z0-9_]+)__([A-Za-z0-9_]+)$/.exec(eventType);
    if (!m) throw new AppError("VALIDATION", `event_type for line protocol must be <schema>__<table>, got "${eventType}"`, { details: { fields: ["filter.event_type"] } });
    return `${m[1]}.${m[2]}`;
  }
  if (protoType >= 200 && protoType <= 202) return `main.${["otlp_traces", "otlp_metrics", "otlp_logs"][protoType - 200]}`;
  if (Number.isInteger(protoType) && protoType >= 0 && protoType <= 65535) return `main.hep_proto_${protoType}_default`;
  throw new AppError("VALIDATION", `proto_type ${protoType} is not a HEP protocol type`, { details: { fields: ["filter.proto_type"] } });
}

const isoUs = (us: number) => {
  const ms = Math.floor(us / 1000);
  return new Date(ms).toISOString().replace("Z", "").replace(/\.(\d{3})$/, (_m, d: string) => `.${d}${String(us - ms * 1000).padStart(3, "0")}Z`);
};

export class SearchService {
  constructor(
    private readonly lake: Lake,
    private readonly settings: SettingsStore,
    private readonly search: LakeSearchConfig,
    private readonly timeoutMs: number,
  ) {}

  virtualFields(hepid: number, profile: string): Map<string, VirtualField> {
    const out = new Map<string, VirtualField>();
    const page = this.settings.mappings.list({ hepid, profile }, { limit: 10 } as never);
    for (const m of page.items) {
      for (const f of m.fieldsMapping) {
        const field = f as { id?: unknown; virtual?: { kind?: unknown; path?: unknown; match?: unknown } };
        const v = field.virtual;
        if (typeof field.id !== "string" || !v || typeof v.path !== "string") continue;
        const match = v.match === "equals" || v.match === "absent" || v.match === "present" ? v.match : "like";
        out.set(field.id, { path: v.path, match });
      }
    }
    return out;
  }

  /** Columns of a table as the search returns them (`timestamp` as ISO, plus `timestamp_us`). */
  private selectList(def: TableDef, narrow: boolean): string {
    return def.columns
      .filter((c) => !(narrow && HEAVY.has(c.name)))
      .map((c) => (c.type === "timestamp" ? `epoch_us("${c.name}") AS "${c.name}"` : `"${c.name.replaceAll('"', '""')}"`))
      .join(", ");
  }

  /**
   * Proto 300: `<schema>__<table>` is ambiguous when either name holds `__` (the regex split of
   * `tableKeyFor` takes the last one), and catalog names fold case: the lake table whose
   * `<schema>__<table>` spells the event type wins, same case first.
   */
  private lineProtocolKey(eventType: string): string | undefined {
    const names = this.lake.tables().map((d) => ({ key: `${d.schema}.${d.name}`, profile: `${d.schema}__${d.name}` }));
    const want = eventType.toLowerCase();
    return (names.find((n) => n.profile === eventType) ?? names.find((n) => n.profile.toLowerCase() === want))?.key;
  }

  async run(req: SearchRequest): Promise<SearchResult> {
    let key = tableKeyFor(req.protoType, req.eventType);
    if (req.protoType === 300 && key !== undefined && !this.lake.table(key)) key = this.lineProtocolKey(req.eventType) ?? key;
    const def = key ? this.lake.table(key) : undefined;
    if (!key || !def) return { items: [], keys: [], limit: req.limit, total: 0, table: key ?? null };
    const where = buildWhere({
      protoType: req.protoType,
      eventType: req.eventType || "call",
      filter: req.filter,
      virtualFields: req.protoType >= 200 ? new Map() : this.virtualFields(req.protoType, req.eventType || "call"),
      columns: new Set(def.columns.map((c) => c.name)),
    });
    const hep = def.columns.some((c) => c.name === "payload") && req.protoType < 200;
    const lazy = this.search.lazy_payload && hep;
    const time = `"${def.timeColumn}"`;
    const filtered = where.applied.length > 0;
    const wide = req.toMs - req.fromMs > HOUR_MS;
    const strategy = !wide || filtered ? "full" : this.search.lake_topn_strategy;
    const rows: Record<string, unknown>[] = [];
    const windowQuery = async (fromMs: number, toMs: number, limit: number, ordered: boolean) => {
      const scan = this.lake.scanSql(key, {
        fromUs: fromMs * 1000,
        toUs: toMs * 1000,
        ...(where.sessionIds ? { equals: { column: "session_id", values: where.sessionIds } } : {}),
        newestFirst: !ordered,
      });
      const params = [...where.params, fromMs * 1000, toMs * 1000];
      const n = where.params.length;
      const sql =
        `SELECT ${this.selectList(def, lazy)} FROM (${scan}) t WHERE ${time} BETWEEN make_timestamp($${n + 1}::BIGINT) AND make_timestamp($${n + 2}::BIGINT) AND (${where.sql})` +
        `${ordered ? ` ORDER BY ${time} DESC` : ""} LIMIT ${limit}`;
      return (await this.lake.query(sql, params, { timeoutMs: this.timeoutMs })).rows;
    };
    if (strategy === "chunked") {
      const step = this.search.lake_chunk_sec * 1000;
      for (let hi = req.toMs; hi >= req.fromMs && rows.length < req.limit; hi -= step) {
        rows.push(...(await windowQuery(Math.max(req.fromMs, hi - step + 1), hi, req.limit - rows.length, true)));
      }
    } else {
      rows.push(...(await windowQuery(req.fromMs, req.toMs, req.limit, strategy === "full")));
    }
    rows.sort((a, b) => Number(b[def.timeColumn]) - Number(a[def.timeColumn]));
    if (lazy && rows.length > 0) await this.hydrate(key, def, rows);
    const items = rows.map((r, i) => this.toItem(r, i, def, key));
    const keys = items[0] ? Object.keys(items[0]) : [];
    return { items, keys, limit: req.limit, total: items.length, table: key };
  }

  /** Fills payload and data_extra for the returned rows only (lazy_payload). */
  private async hydrate(key: string, def: TableDef, rows: Record<string, unknown>[]): Promise<void> {
    const ts = rows.map((r) => Number(r[def.timeColumn]));
    const lo = Math.min(...ts);
    const hi = Math.max(...ts);
    const uuids = rows.map((r) => String(r.uuid));
    const scan = this.lake.scanSql(key, { fromUs: lo, toUs: hi });
    const ph = uuids.map((_u, i) => `$${i + 3}`).join(", ");
    const got = await this.lake.query(
      `SELECT uuid, payload, data_extra FROM (${scan}) t WHERE "${def.timeColumn}" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND uuid IN (${ph})`,
      [lo, hi, ...uuids],
      { timeoutMs: this.timeoutMs },
    );
    const byId = new Map(got.rows.map((r) => [String(r.uuid), r]));
    for (const r of rows) {
      const h = byId.get(String(r.uuid));
      r.payload = h?.payload ?? null;
      r.data_extra = h?.data_extra ?? null;
    }
  }

  toItem(r: Record<string, unknown>, i: number, def: TableDef, key: string): Record<string, unknown> {
    const out: Record<string, unknown> = { id: i + 1 };
    if ("session_id" in r) out.sid = r.session_id;
    for (const c of def.columns) {
      const v = r[c.name];
      if (c.type === "timestamp" && v !== null && v !== undefined) {
        out[c.name] = isoUs(Number(v));
        out[`${c.name}_us`] = Number(v);
      } else if (c.name === "data_extra" && typeof v === "string") {
        try {
          out[c.name] = JSON.parse(v);
        } catch {
          out[c.name] = v;
        }
      } else out[c.name] = v ?? null;
    }
    if (typeof r.src_ip === "string") out.src_alias = this.settings.aliases.resolveAlias(r.src_ip) ?? null;
    if (typeof r.dst_ip === "string") out.dst_alias = this.settings.aliases.resolveAlias(r.dst_ip) ?? null;
    out.storage_lake = "svc_lake";
    out.storage_volume = key;
    return out;
  }
}

export { isoUs };
