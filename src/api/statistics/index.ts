import { Elysia, t, type TSchema } from "elysia";
import { AppError } from "../../core/index.ts";
import { DUCKDB_TYPE } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { errors } from "../openapi/schemas.ts";
import { SqlBody, sqlOverNodes, sqlRequest, sqlResponses, type SqlQueryService } from "../query/index.ts";
import { NodesMetaMembers, nodesMeta, type Gathered, type OverNodes } from "../search/fan-out.ts";
import { noLakeError } from "../search/no-lake.ts";
import { lakeTableStats, tableStatsOverNodes, type TableStat } from "./tables.ts";

export { lakeTableStats, NodeStatisticsBody, type TableStat } from "./tables.ts";

/** `{data: {items}, meta: {pagination}}` like every list of the v4 API; these lists are never paged. Over nodes meta.nodes and meta.partial too. */
const list = <T>(items: T[], g?: Gathered<unknown>) => ({
  data: { items },
  meta: { pagination: { limit: items.length, total: items.length, next_cursor: null }, ...nodesMeta(g) },
});

/** The answer schema of such a list. */
const ListOf = <T extends TSchema>(item: T) =>
  t.Object({
    data: t.Object({ items: t.Array(item) }),
    meta: t.Object({
      pagination: t.Object({
        limit: t.Integer(),
        total: t.Integer(),
        next_cursor: t.Null({ description: "never paged" }),
      }),
      ...NodesMetaMembers,
    }),
  });

const DatabaseItem = t.Object({
  name: t.String({ description: "schema name" }),
  measurements: t.Integer({ description: "its lake tables" }),
});
const MeasurementItem = t.Object({
  name: t.String(),
  qualified_name: t.String({ description: "svc_lake.<schema>.<table>, as user SQL names it" }),
  time_column: t.String(),
  columns: t.Integer(),
  committed_rows: t.Number({
    description: "rows in committed Parquet files (catalog statistics); rows still buffered are not counted",
  }),
  data_files: t.Integer(),
  min_time: t.Union([t.String(), t.Null()]),
  max_time: t.Union([t.String(), t.Null()]),
});
const MetricItem = t.Object({
  measurement: t.String(),
  columns: t.Array(t.Object({ name: t.String(), type: t.String({ description: "DuckDB type name" }) })),
});

/** Plain code-unit order: the same on every machine, whatever its locale. */
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const dbQuery = t.Object(
  { db: t.String({ minLength: 1, maxLength: 128, description: "schema name, as listed by /statistics/databases" }) },
  { additionalProperties: true },
);

/** The lake tables of one schema, in name order; 404 for a schema without tables (on any node). */
function tablesOf(tables: readonly TableStat[], db: string, g?: Gathered<unknown>): TableStat[] {
  const want = db.toLowerCase();
  const defs = tables
    .filter((s) => s.def.schema.toLowerCase() === want)
    .sort((a, b) => byCodeUnit(a.def.name, b.def.name));
  if (defs.length === 0) {
    const missing = (g?.nodes ?? []).filter((n) => n.status === "failed" || n.status === "timeout").map((n) => n.name);
    throw new AppError(
      "NOT_FOUND",
      `no database ${JSON.stringify(db)} (see GET /statistics/databases)${missing.length ? `; these nodes did not answer: ${missing.join(", ")}` : ""}`,
    );
  }
  return defs;
}

/**
 * Discovery and statistics over the lake (docs/LINE-PROTOCOL.md "Discovery response"):
 * databases are the schemas that hold lake tables, measurements their tables (buffer views and
 * buffer generations are internals and not listed), metrics their columns with the SQL type.
 * `POST /statistics/query` takes `raw` SQL checked exactly like `POST /query`. With
 * coordinator.nodes every one of them reads every node (tables.ts; docs/ARCHITECTURE.md "Reads
 * over several nodes").
 */
export function statisticsRoutes(service: SqlQueryService | undefined, over?: OverNodes) {
  // Undefined on a coordinator without a lake: the nodes answer (docs/ARCHITECTURE.md "A coordinator without a lake").
  const lake = service?.lake;
  const own = () => {
    if (!service) throw noLakeError("statistics without coordinator.nodes");
    return service;
  };
  const tables = async (withStats: boolean): Promise<{ tables: TableStat[]; gathered?: Gathered<unknown> }> =>
    over ? await tableStatsOverNodes(lake, over, withStats) : { tables: await lakeTableStats(own().lake, withStats) };
  return (
    new Elysia({ name: "svc-statistics" })
      .use(authContext)
      .get(
        "/statistics/databases",
        async () => {
          const r = await tables(false);
          const counts = new Map<string, number>();
          // Schemas as spelled where first seen, counted case-insensitively as tablesOf looks them up.
          const spelled = new Map<string, string>();
          for (const s of r.tables) {
            const k = s.def.schema.toLowerCase();
            if (!spelled.has(k)) spelled.set(k, s.def.schema);
            counts.set(spelled.get(k)!, (counts.get(spelled.get(k)!) ?? 0) + 1);
          }
          return list(
            [...counts].sort(([a], [b]) => byCodeUnit(a, b)).map(([name, measurements]) => ({ name, measurements })),
            r.gathered,
          );
        },
        {
          detail: { tags: ["Statistics"], summary: "Schemas that hold lake tables" },
          response: { 200: ListOf(DatabaseItem), ...errors(401) },
        },
      )
      .get(
        "/statistics/measurements",
        async ({ query }) => {
          const r = await tables(true);
          return list(
            tablesOf(r.tables, query.db, r.gathered).map(({ def: d, ...s }) => ({
              name: d.name,
              qualified_name: `svc_lake.${d.schema}.${d.name}`,
              time_column: d.timeColumn,
              columns: d.columns.length,
              // Committed Parquet only (catalog statistics); rows still in the buffer are not counted.
              committed_rows: s.rows,
              data_files: s.files,
              min_time: s.minTs,
              max_time: s.maxTs,
            })),
            r.gathered,
          );
        },
        {
          query: dbQuery,
          detail: { tags: ["Statistics"], summary: "Tables of one schema (query db)" },
          response: { 200: ListOf(MeasurementItem), ...errors(400, 401, 404) },
        },
      )
      .get(
        "/statistics/metrics",
        async ({ query }) => {
          const r = await tables(false);
          return list(
            tablesOf(r.tables, query.db, r.gathered).map(({ def: d }) => ({
              measurement: d.name,
              columns: d.columns.map((c) => ({ name: c.name, type: DUCKDB_TYPE[c.type] })),
            })),
            r.gathered,
          );
        },
        {
          query: dbQuery,
          detail: { tags: ["Statistics"], summary: "Columns and SQL types of each table of one schema (query db)" },
          response: { 200: ListOf(MetricItem), ...errors(400, 401, 404) },
        },
      )
      // Over nodes as POST /query: not merged (an aggregate is per node), each row labelled svc_node.
      .post(
        "/statistics/query",
        async ({ body }) =>
          over ? await sqlOverNodes(service, over, sqlRequest(body, "raw")) : await own().run(sqlRequest(body, "raw")),
        {
          body: SqlBody,
          detail: { tags: ["Statistics"], summary: "Read-only SQL in body member raw, validated like POST /query" },
          response: sqlResponses,
        },
      )
  );
}
