import { resolve } from "node:path";
import { engineTuning, type Config } from "../../config/index.ts";
import { AppError, type Counter, type MetricsRegistry, type Result } from "../../core/index.ts";
import {
  checkReadOnlySql,
  crossCheckWithDuckDb,
  type CheckedSql,
  type Lake,
  lakeStateDir,
  type SqlRejectReason,
} from "../../lake/index.ts";
import { type Static, t } from "elysia";
import { NodesMetaMembers } from "../search/fan-out.ts";

export const DEFAULT_ROW_LIMIT = 1000;
export const MAX_ROW_LIMIT = 50_000;

export interface SqlRunRequest {
  sql: string;
  /** Rows returned at most (default 1000, capped at 50000); one more is read to detect truncation. */
  limit?: number | undefined;
  /** Seconds, capped by `coordinator.query_timeout_sec`. */
  timeoutSec?: number | undefined;
}

/** The answer of `POST /query` and `POST /statistics/query` (docs/API.md "User SQL"). */
export const SqlRunResultSchema = t.Object({
  data: t.Object({
    columns: t.Array(t.Object({ name: t.String(), type: t.String({ description: "DuckDB type name" }) })),
    rows: t.Array(t.Record(t.String(), t.Unknown()), { description: "one object per row, keyed by column name" }),
  }),
  meta: t.Object({
    row_count: t.Integer(),
    truncated: t.Boolean({ description: "more rows matched than the limit" }),
    limit: t.Integer(),
    elapsed_ms: t.Number(),
    snapshot_id: t.Integer({ description: "the lake snapshot the statement read" }),
    tables: t.Array(t.String(), { description: "svc_lake tables the statement read" }),
    ...NodesMetaMembers,
  }),
});
export type SqlRunResult = Static<typeof SqlRunResultSchema>;

export interface SqlQueryConfig {
  /** `coordinator.query_timeout_sec`: the ceiling of any user query (docs/API.md "Limits"). */
  maxTimeoutSec: number;
  /** `coordinator.query.max_result_bytes`: the JSON size of the rows at most. */
  maxResultBytes: number;
  /** Directories replaced by `<lake>` in DuckDB messages (data path, catalog directory). */
  privatePaths: string[];
}

/**
 * Read-only SQL over the lake for `POST /query` and `POST /statistics/query` (docs/API.md "User SQL";
 * docs/LINE-PROTOCOL.md "Discovery response"): the token guard of src/lake, its
 * cross-check with DuckDB's parse of the statement, then DuckDB's own parser (one statement, a
 * SELECT) inside a LIMIT wrapper, with the time-out (docs/ARCHITECTURE.md "User SQL: the read-only guard").
 */
export class SqlQueryService {
  private readonly outcomes: Counter<"result">;
  private readonly rejections: Counter<"reason">;

  constructor(
    readonly lake: Lake,
    private readonly cfg: SqlQueryConfig,
    metrics: MetricsRegistry,
  ) {
    this.outcomes = metrics.counter(
      "svc_sql_queries_total",
      "User SQL queries (POST /query, /statistics/query) by result.",
      ["result"],
    );
    this.rejections = metrics.counter("svc_sql_rejected_total", "User SQL refused by the read-only check, by reason.", [
      "reason",
    ]);
  }

  /** Time-out ceiling and private paths from the configuration (main.ts). */
  static fromConfig(lake: Lake, config: Config, metrics: MetricsRegistry): SqlQueryService {
    const l = config.storage.lakehouse;
    const privatePaths = [lake.dataPathResolved(), resolve(l.data_path), lakeStateDir(l)];
    const tempDirectory = engineTuning(config).temp_directory;
    if (tempDirectory) privatePaths.push(resolve(tempDirectory));
    return new SqlQueryService(
      lake,
      {
        maxTimeoutSec: config.coordinator.query_timeout_sec,
        maxResultBytes: config.coordinator.query.max_result_bytes,
        privatePaths,
      },
      metrics,
    );
  }

  /** Every lake table and its buffer view `mem_<table>` (docs/ARCHITECTURE.md "Reserved names"), never a buffer generation. */
  allowedTables(): Set<string> {
    const out = new Set<string>();
    for (const d of this.lake.tables()) {
      const schema = d.schema.toLowerCase();
      const name = d.name.toLowerCase();
      out.add(`svc_lake.${schema}.${name}`);
      out.add(`svc_lake.${schema}.mem_${name}`);
    }
    return out;
  }

  /** The token guard (src/lake/query/sql-guard.ts); what it lets through still meets DuckDB's parse (crossCheck). */
  protected check(sql: string): Result<CheckedSql, SqlRejectReason> {
    return checkReadOnlySql(sql, { allowedTables: this.allowedTables() });
  }

  async run(req: SqlRunRequest): Promise<SqlRunResult> {
    const checked = this.check(req.sql);
    if (!checked.ok) {
      this.reject(checked.reason);
      throw new AppError("SQL_FORBIDDEN", checked.detail ?? checked.reason, { details: { reason: checked.reason } });
    }
    const limit = Math.min(Math.max(1, Math.floor(req.limit ?? DEFAULT_ROW_LIMIT)), MAX_ROW_LIMIT);
    const timeoutSec = Math.min(
      req.timeoutSec && req.timeoutSec > 0 ? req.timeoutSec : this.cfg.maxTimeoutSec,
      this.cfg.maxTimeoutSec,
    );
    // The guard's output has no comments left, so the closing parenthesis cannot be commented out.
    const wrapped = `SELECT * FROM (${checked.value.sql}) AS svc_query LIMIT ${limit + 1}`;
    await this.crossCheck(wrapped, checked.value.tables, timeoutSec);
    const snapshotId = await this.lake.snapshotId();
    const t0 = performance.now();
    let result;
    try {
      result = await this.lake.query(wrapped, undefined, {
        timeoutMs: Math.round(timeoutSec * 1000),
        readOnly: true,
        maxResultBytes: this.cfg.maxResultBytes,
      });
    } catch (e) {
      this.outcomes.inc({
        result:
          e instanceof AppError && e.code === "TIMEOUT"
            ? "timeout"
            : e instanceof AppError && e.code === "PAYLOAD_TOO_LARGE"
              ? "too_large"
              : "error",
      });
      if (e instanceof AppError && e.code === "SQL_FORBIDDEN") this.rejections.inc({ reason: "duckdb_parser" });
      // DuckDB's message is the useful answer to a typo; the details (rewritten SQL, file list) are not for users.
      // Names coordinator.query.max_result_bytes and how to narrow the query; no path in it.
      if (e instanceof AppError && e.code === "PAYLOAD_TOO_LARGE") throw e;
      if (e instanceof AppError && e.code === "QUERY_FAILED") throw new AppError("SQL_INVALID", this.redact(e.message));
      if (e instanceof AppError) throw new AppError(e.code, this.redact(e.message));
      throw e;
    }
    const truncated = result.rows.length > limit;
    const rows = truncated ? result.rows.slice(0, limit) : result.rows;
    this.outcomes.inc({ result: "ok" });
    return {
      data: { columns: result.columns.map((name, i) => ({ name, type: result.types[i] ?? "UNKNOWN" })), rows },
      meta: {
        row_count: rows.length,
        truncated,
        limit,
        elapsed_ms: Math.round((performance.now() - t0) * 10) / 10,
        snapshot_id: snapshotId,
        tables: checked.value.tables,
      },
    };
  }

  /**
   * DuckDB's parse of the statement that will run names only relations the guard resolved
   * (src/lake/query/parse-check.ts): one parse, nothing bound or executed.
   */
  private async crossCheck(wrapped: string, tables: string[], timeoutSec: number): Promise<void> {
    let parsed;
    try {
      parsed = await crossCheckWithDuckDb(
        (q, p) => this.lake.query(q, p, { timeoutMs: Math.round(timeoutSec * 1000) }),
        wrapped,
        tables,
      );
    } catch (e) {
      this.outcomes.inc({ result: "error" });
      if (e instanceof AppError) throw new AppError(e.code, this.redact(e.message));
      throw e;
    }
    if (parsed.ok) return;
    if (parsed.reason === "syntax") {
      this.outcomes.inc({ result: "error" });
      throw new AppError("SQL_INVALID", this.redact(parsed.detail ?? "syntax error"));
    }
    this.reject(parsed.reason);
    throw new AppError("SQL_FORBIDDEN", this.redact(parsed.detail ?? parsed.reason), {
      details: { reason: parsed.reason },
    });
  }

  private reject(reason: SqlRejectReason): void {
    this.outcomes.inc({ result: "rejected" });
    this.rejections.inc({ reason });
  }

  private redact(message: string): string {
    let out = message;
    // Longest first, so a data path inside the state directory is replaced whole.
    for (const p of [...this.cfg.privatePaths].sort((a, b) => b.length - a.length))
      if (p.length > 1) out = out.replaceAll(p, "<lake>");
    return out;
  }
}
