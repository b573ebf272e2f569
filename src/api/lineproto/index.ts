import { Elysia, t } from "elysia";
import { AppError, errorMessage, type Logger, type Module, type TableDef } from "../../core/index.ts";
import { adoptStoredTables, isLineProtocolLayout, VALID_PREFIX, type LpSink } from "../../ingest/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { NodesMetaMembers, nodesMeta, type Gathered, type OverNodes } from "../search/fan-out.ts";
import { noLakeError } from "../search/no-lake.ts";
import { errors, boolQuery, parseBoolQuery } from "../openapi/schemas.ts";
import {
  LpTableSchema,
  lineProtocolTables,
  syncLineProtocolMappings,
  tableItem,
  type LpSyncReport,
} from "./service.ts";

export {
  lineProtocolFields,
  lineProtocolTables,
  lpProfile,
  syncLineProtocolMappings,
  tableItem,
  LP_HEPID,
  type LpColumnItem,
  type LpSyncReport,
  type LpTableItem,
} from "./service.ts";

const IDENT = /^[A-Za-z0-9_]+$/;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export interface LineProtocolRouteDeps {
  /** Undefined on a coordinator without a lake: the nodes' tables only. */
  lake: Pick<Lake, "tables"> | undefined;
  /** coordinator.nodes: the tables of every node, unioned (docs/ARCHITECTURE.md "Reads over several nodes"). */
  over?: OverNodes;
  /** `ingest.line_protocol.table_prefix`: the default `prefix` (the receiver's, including empty). */
  tablePrefix: string;
}

/**
 * Discovery (docs/LINE-PROTOCOL.md "Discovery response"): the
 * line-protocol tables of the lake and their columns. JWT like the rest of v4 (the global guard).
 */
export function lineProtocolRoutes(deps: LineProtocolRouteDeps) {
  return new Elysia({ name: "svc-lineproto" })
    .use(authContext)
    .get(
      "/line_protocol/tables",
      async ({ query }) => {
        const prefix = query.prefix ?? deps.tablePrefix;
        if (!VALID_PREFIX.test(prefix))
          throw new AppError("VALIDATION", "prefix: only ASCII letters, digits and _ are allowed", {
            details: { fields: ["prefix"] },
          });
        if (query.schema !== undefined && !IDENT.test(query.schema)) {
          throw new AppError("VALIDATION", "schema: an identifier (ASCII letters, digits and _) is required", {
            details: { fields: ["schema"] },
          });
        }
        const limit = query["page[limit]"] ?? DEFAULT_LIMIT;
        const offset = query["page[offset]"] ?? 0;
        const seen = await discovered(deps);
        const all = lineProtocolTables(seen.tables, prefix, query.schema);
        const withColumns = parseBoolQuery(query.with_columns) ?? true;
        const items = all.slice(offset, offset + limit).map((d) => tableItem(d, withColumns));
        return {
          data: { items, prefix },
          total: all.length,
          meta: {
            pagination: { limit, offset, total: all.length, has_more: offset + items.length < all.length },
            ...nodesMeta(seen.gathered),
          },
        };
      },
      {
        query: t.Object({
          prefix: t.Optional(
            t.String({
              maxLength: 255,
              pattern: VALID_PREFIX.source,
              description:
                "table-name prefix (default: ingest.line_protocol.table_prefix); empty lists all but hep_proto_*, otlp_*, mem_hep_*",
            }),
          ),
          schema: t.Optional(
            t.String({
              maxLength: 255,
              pattern: IDENT.source,
              description: "only this schema (identifier: ASCII letters, digits and _)",
            }),
          ),
          with_columns: boolQuery("include column metadata (default true)"),
          "page[limit]": t.Optional(
            t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `page size (default ${DEFAULT_LIMIT})` }),
          ),
          "page[offset]": t.Optional(t.Integer({ minimum: 0, description: "tables to skip (default 0)" })),
        }),
        detail: {
          tags: ["Statistics"],
          summary: "Line-protocol tables and their columns (data.items, data.prefix, total, meta.pagination)",
        },
        response: {
          200: t.Object({
            data: t.Object({
              items: t.Array(LpTableSchema),
              prefix: t.String({ description: "the prefix the list was made with" }),
            }),
            total: t.Integer({ description: "tables matching, all pages" }),
            meta: t.Object({
              pagination: t.Object({
                limit: t.Integer(),
                offset: t.Integer(),
                total: t.Integer(),
                has_more: t.Boolean(),
              }),
              ...NodesMetaMembers,
            }),
          }),
          ...errors(400, 401),
        },
      },
    )
    .get(
      "/line_protocol/tables/:schema/:table",
      async ({ params }) => {
        const seen = await discovered(deps);
        const def = findTable(seen.tables, params.schema, params.table);
        if (!def) throw new AppError("NOT_FOUND", `no line-protocol table ${params.schema}.${params.table}`);
        return { data: tableItem(def, true), ...(seen.gathered ? { meta: nodesMeta(seen.gathered) } : {}) };
      },
      {
        params: t.Object({ schema: t.String({ maxLength: 255 }), table: t.String({ maxLength: 255 }) }),
        detail: { tags: ["Statistics"], summary: "One line-protocol table's column metadata" },
        response: {
          200: t.Object({ data: LpTableSchema, meta: t.Optional(t.Object(NodesMetaMembers)) }),
          ...errors(401, 404),
        },
      },
    );
}

/** This lake's line-protocol tables (what a node answers a coordinator, src/cluster/node-reads.ts). */
export const lineProtocolDefs = (lake: Pick<Lake, "tables">): TableDef[] =>
  lake.tables().filter((d) => isLineProtocolLayout(d.columns));

/** The tables of this lake, or over coordinator.nodes of every node (and this lake when it has one). */
async function discovered(
  deps: LineProtocolRouteDeps,
): Promise<{ tables: TableDef[]; gathered: Gathered<{ tables: TableDef[] }> | undefined }> {
  if (deps.over) return await tablesOverNodes(deps.lake, deps.over);
  if (!deps.lake) throw noLakeError("line-protocol discovery without coordinator.nodes");
  return { tables: deps.lake.tables(), gathered: undefined };
}

/**
 * The line-protocol tables of this lake and of every node: a table is listed once (schema and name
 * case-insensitive) with the union of its columns (a column first seen keeps its type), so a
 * measurement or tag written to one node only is discovered.
 */
async function tablesOverNodes(
  lake: Pick<Lake, "tables"> | undefined,
  over: OverNodes,
): Promise<{ tables: TableDef[]; gathered: Gathered<{ tables: TableDef[] }> }> {
  const g = await over.gather<{ tables: TableDef[] }>({
    read: "line-protocol",
    path: "/api/v1/line_protocol/tables",
    body: () => ({}),
    ...(lake ? { local: async () => ({ tables: lineProtocolDefs(lake) }) } : {}),
    rows: (v) => v.tables.length,
  });
  const byKey = new Map<string, TableDef>();
  for (const a of g.answers) {
    for (const d of a.value.tables) {
      const k = `${d.schema}.${d.name}`.toLowerCase();
      const had = byKey.get(k);
      if (!had) {
        byKey.set(k, { ...d, columns: [...d.columns] });
        continue;
      }
      for (const c of d.columns)
        if (!had.columns.some((x) => x.name.toLowerCase() === c.name.toLowerCase())) had.columns.push(c);
    }
  }
  return { tables: [...byKey.values()], gathered: g };
}

/** Names match case-insensitively, as the catalog resolves them. */
function findTable(tables: readonly TableDef[], schema: string, name: string): TableDef | undefined {
  const s = schema.toLowerCase();
  const n = name.toLowerCase();
  return tables.find(
    (d) => d.schema.toLowerCase() === s && d.name.toLowerCase() === n && isLineProtocolLayout(d.columns),
  );
}

export interface LineProtocolSync extends Module {
  /** One sync now (also what the timer runs). */
  syncNow(): LpSyncReport;
}

/**
 * Mapping sync (docs/LINE-PROTOCOL.md "Automatic mapping rows"): at start (after adopting the catalog's
 * line-protocol tables, so tables written before a restart are searchable) and every 60 s.
 */
export function lineProtocolMappingSync(
  deps: { lake: LpSink; settings: SettingsStore; tablePrefix: string; logger: Logger },
  intervalMs = 60_000,
): LineProtocolSync {
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
