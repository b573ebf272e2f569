import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { MAX_ROW_LIMIT, type SqlQueryService, type SqlRunRequest } from "./service.ts";

export { DEFAULT_ROW_LIMIT, MAX_ROW_LIMIT, SqlQueryService, type SqlQueryConfig, type SqlRunRequest, type SqlRunResult } from "./service.ts";

const MAX_SQL_CHARS = 100_000;

/**
 * Body of `POST /query` and `POST /statistics/query`. Spec doc 1 names only `raw` (statistics
 * variant); `sql` is ours and `query` is accepted as well, so clients of either API work.
 */
const statement = (description: string) => t.Optional(t.String({ minLength: 1, maxLength: MAX_SQL_CHARS, pattern: "\\S", description }));

export const SqlBody = t.Object(
  {
    sql: statement("one read-only statement (SELECT, WITH, FROM-first or VALUES)"),
    raw: statement("alias of sql (statistics API)"),
    query: statement("alias of sql"),
    limit: t.Optional(t.Integer({ minimum: 1, description: `rows returned at most (default 1000, capped at ${MAX_ROW_LIMIT}); a result over coordinator.query.max_result_bytes of JSON is a 413` })),
    timeout_sec: t.Optional(t.Number({ exclusiveMinimum: 0, description: "time-out in seconds, capped by coordinator.query_timeout_sec" })),
  },
  {
    additionalProperties: true,
    // For the OpenAPI document (sqlRequest checks it): one of the three carries the statement.
    anyOf: [{ required: ["sql"] }, { required: ["raw"] }, { required: ["query"] }],
  },
);

export const sqlResponses = { ...errors(400, 401), 413: ErrorResponse, 422: ErrorResponse };

/** The SQL text of a body, whichever member carries it; 400 naming the field when none does. */
export function sqlRequest(body: typeof SqlBody.static, preferred: "sql" | "raw"): SqlRunRequest {
  const sql = preferred === "raw" ? (body.raw ?? body.sql ?? body.query) : (body.sql ?? body.query ?? body.raw);
  if (sql === undefined || sql.trim() === "") throw new AppError("VALIDATION", `${preferred}: a SQL statement is required`, { details: { fields: [preferred] } });
  return { sql, limit: body.limit, timeoutSec: body.timeout_sec };
}

/**
 * `POST /query` (spec doc 1): read-only SQL over `svc_lake` tables. Open to every logged-in user,
 * not only administrators: it reads exactly what the search API already shows them (HOMER lets
 * users query statistics too), and the guard keeps it away from files, settings and writes.
 */
export function queryRoutes(service: SqlQueryService) {
  return new Elysia({ name: "svc-query" }).use(authContext).post("/query", async ({ body }) => await service.run(sqlRequest(body, "sql")), {
    body: SqlBody,
    detail: {
      tags: ["Statistics"],
      summary: "Read-only SQL over svc_lake tables: one SELECT/WITH statement, row limit and time-out; {data: {columns, rows}, meta}",
    },
    response: sqlResponses,
  });
}
