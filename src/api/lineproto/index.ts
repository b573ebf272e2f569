import { Elysia, t } from "elysia";
import { AppError, errorMessage, type Logger, type Module, type TableDef } from "../../core/index.ts";
import { adoptStoredTables, isLineProtocolLayout, VALID_PREFIX, type LpSink } from "../../ingest/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { errors, boolQuery, parseBoolQuery } from "../openapi/schemas.ts";
import { lineProtocolTables, syncLineProtocolMappings, tableItem, type LpSyncReport } from "./service.ts";

export { lineProtocolFields, lineProtocolTables, lpProfile, syncLineProtocolMappings, tableItem, LP_HEPID, type LpColumnItem, type LpSyncReport, type LpTableItem } from "./service.ts";

const IDENT = /^[A-Za-z0-9_]+$/;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export interface LineProtocolRouteDeps {
  lake: Pick<Lake, "tables">;
  /** `ingest.line_protocol.table_prefix`: the default `prefix` (the receiver's, including empty). */
  tablePrefix: string;
}

/**
 * Discovery (spec doc 2 "Coordinator discovery and statistics", "Discovery response"): the
 * line-protocol tables of the lake and their columns. JWT like the rest of v4 (the global guard).
 */
export function lineProtocolRoutes(deps: LineProtocolRouteDeps) {
  return new Elysia({ name: "svc-lineproto" })
    .use(authContext)
    .get(
      "/line_protocol/tables",
      ({ query }) => {
        const prefix = query.prefix ?? deps.tablePrefix;
        if (!VALID_PREFIX.test(prefix)) throw new AppError("VALIDATION", "prefix: only ASCII letters, digits and _ are allowed", { details: { fields: ["prefix"] } });
        if (query.schema !== undefined && !IDENT.test(query.schema)) {
          throw new AppError("VALIDATION", "schema: an identifier (ASCII letters, digits and _) is required", { details: { fields: ["schema"] } });
        }
        const limit = query["page[limit]"] ?? DEFAULT_LIMIT;
        const offset = query["page[offset]"] ?? 0;
        const all = lineProtocolTables(deps.lake.tables(), prefix, query.schema);
        const withColumns = parseBoolQuery(query.with_columns) ?? true;
        const items = all.slice(offset, offset + limit).map((d) => tableItem(d, withColumns));
        return {
          data: { items, prefix },
          total: all.length,
          meta: { pagination: { limit, offset, total: all.length, has_more: offset + items.length < all.length } },
        };
      },
      {
        query: t.Object({
          prefix: t.Optional(
            t.String({
              maxLength: 255,
              pattern: VALID_PREFIX.source,
              description: "table-name prefix (default: ingest.line_protocol.table_prefix); empty lists all but hep_proto_*, otlp_*, mem_hep_*",
            }),
          ),
          schema: t.Optional(t.String({ maxLength: 255, pattern: IDENT.source, description: "only this schema (identifier: ASCII letters, digits and _)" })),
          with_columns: boolQuery("include column metadata (default true)"),
          "page[limit]": t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `page size (default ${DEFAULT_LIMIT})` })),
          "page[offset]": t.Optional(t.Integer({ minimum: 0, description: "tables to skip (default 0)" })),
        }),
        detail: { tags: ["Statistics"], summary: "Line-protocol tables and their columns (data.items, data.prefix, total, meta.pagination)" },
        response: errors(400, 401),
      },
    )
    .get(
      "/line_protocol/tables/:schema/:table",
      ({ params }) => {
        const def = findTable(deps.lake.tables(), params.schema, params.table);
        if (!def) throw new AppError("NOT_FOUND", `no line-protocol table ${params.schema}.${params.table}`);
        return { data: tableItem(def, true) };
      },
      {
        params: t.Object({ schema: t.String({ maxLength: 255 }), table: t.String({ maxLength: 255 }) }),
        detail: { tags: ["Statistics"], summary: "One line-protocol table's column metadata" },
        response: errors(401, 404),
      },
    );
}

/** Names match case-insensitively, as the catalog resolves them. */
function findTable(tables: readonly TableDef[], schema: string, name: string): TableDef | undefined {
  const s = schema.toLowerCase();
  const n = name.toLowerCase();
  return tables.find((d) => d.schema.toLowerCase() === s && d.name.toLowerCase() === n && isLineProtocolLayout(d.columns));
}

export interface LineProtocolSync extends Module {
  /** One sync now (also what the timer runs). */
  syncNow(): LpSyncReport;
}

/**
 * Mapping sync (doc 2 "Automatic mapping rows"): at start (after adopting the catalog's
 * line-protocol tables, so tables written before a restart are searchable) and every 60 s.
 */
export function lineProtocolMappingSync(deps: { lake: LpSink; settings: SettingsStore; tablePrefix: string; logger: Logger }, intervalMs = 60_000): LineProtocolSync {
  const log = deps.logger.child({ module: "lineproto-sync" });
  let timer: ReturnType<typeof setInterval> | undefined;
  const syncNow = () => syncLineProtocolMappings(deps.lake.tables(), deps.tablePrefix, deps.settings.mappings);
  const tick = () => {
    try {
      const r = syncNow();
      if (r.inserted + r.updated > 0) log.info("line-protocol mappings synced", { ...r });
    } catch (e) {
      log.warn("line-protocol mapping sync failed", { error: errorMessage(e) });
    }
  };
  return {
    name: "lineproto-mapping-sync",
    syncNow,
    async start() {
      await adoptStoredTables(deps.lake, log);
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
