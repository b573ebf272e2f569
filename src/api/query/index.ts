import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { nodesMeta, type NodeReport, type OverNodes } from "../search/fan-out.ts";
import { noLakeError } from "../search/no-lake.ts";
import {
  MAX_ROW_LIMIT,
  SqlRunResultSchema,
  type SqlQueryService,
  type SqlRunRequest,
  type SqlRunResult,
} from "./service.ts";

export {
  DEFAULT_ROW_LIMIT,
  MAX_ROW_LIMIT,
  SqlQueryService,
  type SqlQueryConfig,
  type SqlRunRequest,
  type SqlRunResult,
} from "./service.ts";

const MAX_SQL_CHARS = 100_000;

/**
 * Body of `POST /query` and `POST /statistics/query`. The interface names only `raw` (statistics
 * variant); `sql` is ours and `query` is accepted as well, so clients of either API work.
 */
const statement = (description: string) =>
  t.Optional(t.String({ minLength: 1, maxLength: MAX_SQL_CHARS, pattern: "\\S", description }));

export const SqlBody = t.Object(
  {
    sql: statement("one read-only statement (SELECT, WITH, FROM-first or VALUES)"),
    raw: statement("alias of sql (statistics API)"),
    query: statement("alias of sql"),
    limit: t.Optional(
      t.Integer({
        minimum: 1,
        description: `rows returned at most (default 1000, capped at ${MAX_ROW_LIMIT}); a result over coordinator.query.max_result_bytes of JSON is a 413`,
      }),
    ),
    timeout_sec: t.Optional(
      t.Number({ exclusiveMinimum: 0, description: "time-out in seconds, capped by coordinator.query_timeout_sec" }),
    ),
  },
  {
    additionalProperties: true,
    // For the OpenAPI document (sqlRequest checks it): one of the three carries the statement.
    anyOf: [{ required: ["sql"] }, { required: ["raw"] }, { required: ["query"] }],
  },
);

export const sqlResponses = { 200: SqlRunResultSchema, ...errors(400, 401), 413: ErrorResponse, 422: ErrorResponse };

/** The SQL text of a body, whichever member carries it; 400 naming the field when none does. */
export function sqlRequest(body: typeof SqlBody.static, preferred: "sql" | "raw"): SqlRunRequest {
  const sql = preferred === "raw" ? (body.raw ?? body.sql ?? body.query) : (body.sql ?? body.query ?? body.raw);
  if (sql === undefined || sql.trim() === "")
    throw new AppError("VALIDATION", `${preferred}: a SQL statement is required`, { details: { fields: [preferred] } });
  return { sql, limit: body.limit, timeoutSec: body.timeout_sec };
}

/**
 * `POST /query` (docs/API.md "User SQL"): read-only SQL over `svc_lake` tables. Open to every logged-in user,
 * not only administrators: it reads exactly what the search API already shows them (HOMER lets
 * users query statistics too), and the guard keeps it away from files, settings and writes.
 */
export function queryRoutes(service: SqlQueryService | undefined, over?: OverNodes) {
  const run = (req: SqlRunRequest) => {
    if (!service) throw noLakeError("SQL without coordinator.nodes");
    return service.run(req);
  };
  return new Elysia({ name: "svc-query" })
    .use(authContext)
    .post(
      "/query",
      async ({ body }) =>
        over ? await sqlOverNodes(service, over, sqlRequest(body, "sql")) : await run(sqlRequest(body, "sql")),
      {
        body: SqlBody,
        detail: {
          tags: ["Statistics"],
          summary:
            "Read-only SQL over svc_lake tables: one SELECT/WITH statement, row limit and time-out; {data: {columns, rows}, meta}",
        },
        response: sqlResponses,
      },
    );
}

/** `POST /api/v1/query` of a node (src/cluster/node-reads.ts): the statement, its limit and time-out. */
export const NodeSqlBody = t.Object({
  sql: t.String({ minLength: 1, maxLength: MAX_SQL_CHARS }),
  limit: t.Optional(t.Integer({ minimum: 1 })),
  timeout_sec: t.Optional(t.Number({ exclusiveMinimum: 0 })),
  buffer_only: t.Optional(
    t.Boolean({ description: "another node of the same lake answers: this one does not run the statement" }),
  ),
});

/** The column that names the node a row came from. */
export const SQL_NODE_COLUMN = "svc_node";

/** A node's answer: the statement's result on its lake; nothing when another node of its lake answers. */
export async function nodeSqlAnswer(service: SqlQueryService, b: typeof NodeSqlBody.static): Promise<SqlRunResult> {
  if (b.buffer_only)
    return {
      data: { columns: [], rows: [] },
      meta: { row_count: 0, truncated: false, limit: b.limit ?? 0, elapsed_ms: 0, snapshot_id: 0, tables: [] },
    };
  return service.run({ sql: b.sql, limit: b.limit, timeoutSec: b.timeout_sec });
}

/**
 * Read-only SQL over coordinator.nodes (docs/ARCHITECTURE.md "Reads over several nodes"): the
 * statement runs on each lake once (this process's and every node's; of nodes sharing a lake the
 * first), each row labelled with its node in `svc_node`, the results one after the other in the
 * order of meta.nodes. SQL's answer is not merged: an aggregate is per node.
 */
export async function sqlOverNodes(service: SqlQueryService | undefined, over: OverNodes, req: SqlRunRequest) {
  const g = await over.gather<SqlRunResult>({
    read: "sql",
    path: "/api/v1/query",
    body: (bufferOnly) => ({
      sql: req.sql,
      ...(req.limit !== undefined ? { limit: req.limit } : {}),
      ...(req.timeoutSec !== undefined ? { timeout_sec: req.timeoutSec } : {}),
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
    // Without a lake of its own the nodes check the statement with the same guard (a refusal is the client's 400).
    ...(service ? { local: () => service.run(req) } : {}),
    rows: (v) => v.data.rows.length,
  });
  const answered = g.answers.filter((a) => !a.bufferOnly);
  const first = answered.find((a) => a.value.data.columns.length > 0) ?? answered[0];
  const rows = answered.flatMap((a) => a.value.data.rows.map((r) => ({ [SQL_NODE_COLUMN]: a.name, ...r })));
  const local = g.answers.find((a) => a.name === "local");
  return {
    data: { columns: [{ name: SQL_NODE_COLUMN, type: "VARCHAR" }, ...(first?.value.data.columns ?? [])], rows },
    meta: {
      row_count: rows.length,
      truncated: answered.some((a) => a.value.meta.truncated),
      limit: first?.value.meta.limit ?? req.limit ?? 0,
      elapsed_ms: Math.max(0, ...answered.map((a) => a.value.meta.elapsed_ms)),
      snapshot_id: local?.value.meta.snapshot_id ?? 0,
      tables: first?.value.meta.tables ?? [],
      ...nodesMeta(g as { nodes: NodeReport[]; partial: boolean }),
    },
  };
}
