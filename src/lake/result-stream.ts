import type { DuckDBConnection, DuckDBResult } from "@duckdb/node-api";
import { AppError } from "../core/index.ts";
import { duckDbLoaded } from "./duckdb.ts";
import { chunkJsonFloor, rowObjects, widenInts } from "./result-json.ts";

/** Reading a streamed result under the result byte budget (docs/ARCHITECTURE.md "Query path"). */

export interface QueryResult {
  columns: string[];
  /** DuckDB type of each column (`VARCHAR`, `TIMESTAMP`, `BIGINT[]`…). */
  types: string[];
  rows: Record<string, unknown>[];
  /** JSON size of the rows, when measured (maxResultBytes or readOnly). */
  bytes?: number;
}

export async function runSingleSelect(con: DuckDBConnection, sql: string, budget: ResultBudget): Promise<QueryResult> {
  const statements = await con.extractStatements(sql);
  if (statements.count !== 1)
    throw new AppError("SQL_FORBIDDEN", `exactly one statement is allowed; DuckDB found ${statements.count}`);
  const prepared = await statements.prepare(0);
  try {
    if (prepared.statementType !== duckDbLoaded().StatementType.SELECT)
      throw new AppError("SQL_FORBIDDEN", "only a SELECT statement is allowed");
    return await readStreamed(await prepared.stream(), budget);
  } finally {
    prepared.destroySync();
  }
}

export interface ResultBudget {
  maxBytes: number;
  hint: string;
}

/** The 413 of a result whose JSON passed the budget after `read` rows (every reader of rows gives this one). */
export function resultTooLarge(budget: ResultBudget, read: number): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `the result passed coordinator.query.max_result_bytes (${budget.maxBytes} bytes of JSON) after ${read} rows; ${budget.hint}`,
    { details: { reason: "max_result_bytes", max_result_bytes: budget.maxBytes, rows_read: read } },
  );
}

/**
 * Rows of a streamed result, chunk by chunk, refused with PAYLOAD_TOO_LARGE as soon as their JSON
 * passes the budget. DuckDB produces the next chunk only when it is fetched, so stopping here
 * also stops the query's work and memory.
 */
export async function readStreamed(result: DuckDBResult, budget: ResultBudget): Promise<QueryResult> {
  const types = result.columnTypes();
  const names = result.deduplicatedColumnNames();
  const rows: Record<string, unknown>[] = [];
  let bytes = 0;
  const tooLarge = (read: number) => resultTooLarge(budget, read);
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    // First a floor of the chunk's JSON from DuckDB's own vectors (string lengths, list sizes),
    // before any value becomes a JS value: one 300 MB string, or one list of 10^9 elements (a
    // 23 GB JS array: the process was OOM-killed), is refused without converting it.
    if (bytes + chunkJsonFloor(chunk, budget.maxBytes - bytes + 1) > budget.maxBytes)
      throw tooLarge(rows.length + chunk.rowCount);
    const part = widenInts(rowObjects(chunk, names), names, types);
    // The JSON text the client will receive for these rows (UTF-8), the budget's unit.
    bytes += Buffer.byteLength(JSON.stringify(part));
    if (bytes > budget.maxBytes) throw tooLarge(rows.length + part.length);
    for (const r of part) rows.push(r);
  }
  return { columns: result.columnNames(), types: types.map((t) => t.toString()), rows, bytes };
}
