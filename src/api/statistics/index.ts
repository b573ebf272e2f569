import { Elysia, t } from "elysia";
import { AppError, type TableDef } from "../../core/index.ts";
import { DUCKDB_TYPE, type Lake } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { errors } from "../openapi/schemas.ts";
import { SqlBody, sqlRequest, sqlResponses, type SqlQueryService } from "../query/index.ts";

/** `{data: {items}, meta: {pagination}}` like every list of the v4 API; these lists are never paged. */
const list = <T>(items: T[]) => ({ data: { items }, meta: { pagination: { limit: items.length, total: items.length, next_cursor: null } } });

/** Plain code-unit order: the same on every machine, whatever its locale. */
const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const dbQuery = t.Object({ db: t.String({ minLength: 1, maxLength: 128, description: "schema name, as listed by /statistics/databases" }) }, { additionalProperties: true });

/** The lake tables of one schema, in name order; 404 for a schema without tables. */
function tablesOf(lake: Lake, db: string): TableDef[] {
  const want = db.toLowerCase();
  const defs = lake
    .tables()
    .filter((d) => d.schema.toLowerCase() === want)
    .sort((a, b) => byCodeUnit(a.name, b.name));
  if (defs.length === 0) throw new AppError("NOT_FOUND", `no database ${JSON.stringify(db)} (see GET /statistics/databases)`);
  return defs;
}

/**
 * Discovery and statistics over the lake (docs/LINE-PROTOCOL.md "Discovery response"):
 * databases are the schemas that hold lake tables, measurements their tables (buffer views and
 * buffer generations are internals and not listed), metrics their columns with the SQL type.
 * `POST /statistics/query` takes `raw` SQL checked exactly like `POST /query`.
 */
export function statisticsRoutes(service: SqlQueryService) {
  const lake = service.lake;
  return new Elysia({ name: "svc-statistics" })
    .use(authContext)
    .get(
      "/statistics/databases",
      () => {
        const counts = new Map<string, number>();
        for (const d of lake.tables()) counts.set(d.schema, (counts.get(d.schema) ?? 0) + 1);
        return list([...counts].sort(([a], [b]) => byCodeUnit(a, b)).map(([name, measurements]) => ({ name, measurements })));
      },
      { detail: { tags: ["Statistics"], summary: "Schemas that hold lake tables" }, response: errors(401) },
    )
    .get(
      "/statistics/measurements",
      async ({ query }) => {
        const stats = new Map((await lake.stats()).map((s) => [s.key, s]));
        return list(
          tablesOf(lake, query.db).map((d) => {
            const s = stats.get(`${d.schema}.${d.name}`);
            return {
              name: d.name,
              qualified_name: `svc_lake.${d.schema}.${d.name}`,
              time_column: d.timeColumn,
              columns: d.columns.length,
              // Committed Parquet only (catalog statistics); rows still in the buffer are not counted.
              committed_rows: s?.rows ?? 0,
              data_files: s?.files ?? 0,
              min_time: s?.minTs ?? null,
              max_time: s?.maxTs ?? null,
            };
          }),
        );
      },
      { query: dbQuery, detail: { tags: ["Statistics"], summary: "Tables of one schema (query db)" }, response: errors(400, 401, 404) },
    )
    .get(
      "/statistics/metrics",
      ({ query }) =>
        list(
          tablesOf(lake, query.db).map((d) => ({
            measurement: d.name,
            columns: d.columns.map((c) => ({ name: c.name, type: DUCKDB_TYPE[c.type] })),
          })),
        ),
      { query: dbQuery, detail: { tags: ["Statistics"], summary: "Columns and SQL types of each table of one schema (query db)" }, response: errors(400, 401, 404) },
    )
    .post("/statistics/query", async ({ body }) => await service.run(sqlRequest(body, "raw")), {
      body: SqlBody,
      detail: { tags: ["Statistics"], summary: "Read-only SQL in body member raw, validated like POST /query" },
      response: sqlResponses,
    });
}
