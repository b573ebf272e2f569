/**
 * A search's second pass (lazy_payload, docs/ARCHITECTURE.md "Search"): every column of the rows
 * the first pass picked. Rows of paged data files are read page by page from the file and row
 * number the first pass returned (docs/ARCHITECTURE.md "Row fetch by page"); buffer rows, files
 * with one page per chunk and a file gone in between are read by DuckDB, by uuid under the same
 * filter. Either way the rows' JSON counts against the result byte budget.
 */
import type { TableDef } from "../../core/index.ts";
import { type Lake, ROW_FILE, ROW_NUMBER, resultTooLarge } from "../../lake/index.ts";
import type { WhereClause } from "./filters.ts";

export interface HydrateInput {
  lake: Lake;
  key: string;
  def: TableDef;
  picked: Record<string, unknown>[];
  where: WhereClause;
  scanFor: (fromUs: number, toUs: number, newestFirst: boolean) => Promise<string>;
  /** The table's columns as the search returns them (SearchService.selectList). */
  selectList: string;
  timeoutMs: number;
  budget: { maxResultBytes: number; narrowHint: string };
}

export async function hydrate(h: HydrateInput): Promise<Record<string, unknown>[]> {
  const byFile = new Map<string, Record<string, unknown>[]>();
  const rest: Record<string, unknown>[] = [];
  for (const r of h.picked) {
    const file = r[ROW_FILE];
    if (typeof file !== "string" || r[ROW_NUMBER] === null || r[ROW_NUMBER] === undefined) rest.push(r);
    else if (byFile.has(file)) byFile.get(file)!.push(r);
    else byFile.set(file, [r]);
  }
  const got: Record<string, unknown>[] = [];
  let bytes = 0;
  const files = [...byFile];
  const reads = await h.lake.rowsByPageMany(
    h.key,
    files.map(([path, rows]) => ({ path, rows: rows.map((r) => Number(r[ROW_NUMBER])) })),
  );
  for (let i = 0; i < files.length; i++) {
    const rows = files[i]![1];
    const read = reads[i];
    if (!read) {
      rest.push(...rows);
      continue;
    }
    // The budget DuckDB's streamed reads apply (src/lake/result-stream.ts), in the same unit.
    bytes += Buffer.byteLength(JSON.stringify(read));
    if (bytes > h.budget.maxResultBytes)
      throw resultTooLarge({ maxBytes: h.budget.maxResultBytes, hint: h.budget.narrowHint }, got.length + read.length);
    got.push(...read);
  }
  if (rest.length > 0)
    got.push(
      ...(await withDuckDb(h, rest, {
        ...h.budget,
        maxResultBytes: h.budget.maxResultBytes - bytes,
      })),
    );
  return got;
}

/** Every column of `picked`, found by uuid under the same filter. */
async function withDuckDb(
  h: HydrateInput,
  picked: Record<string, unknown>[],
  budget: HydrateInput["budget"],
): Promise<Record<string, unknown>[]> {
  const { def, where } = h;
  const ts = picked.map((r) => Number(r[def.timeColumn]));
  const lo = Math.min(...ts);
  const hi = Math.max(...ts);
  const n = where.params.length;
  const uuids = picked.map((r) => String(r.uuid));
  // session_id IN (…) is pushed into the Parquet scan (bloom filters, and rows of other calls
  // are dropped before their payload is decoded); uuid IN (…) alone would be a join after it.
  const sessions = [...new Set(picked.map((r) => r.session_id).filter((v): v is string => typeof v === "string"))];
  const hasNullSession = picked.some((r) => r.session_id === null || r.session_id === undefined);
  const uuidPh = uuids.map((_u, i) => `$${n + 3 + i}`).join(", ");
  const sessionPh = sessions.map((_s, i) => `$${n + 3 + uuids.length + i}`).join(", ");
  const sessionCond = [
    sessions.length ? `session_id IN (${sessionPh})` : "",
    hasNullSession ? "session_id IS NULL" : "",
  ]
    .filter(Boolean)
    .join(" OR ");
  const time = `"${def.timeColumn}"`;
  const got = await h.lake.query(
    `SELECT ${h.selectList} FROM (${await h.scanFor(lo, hi, false)}) t WHERE ${time} BETWEEN make_timestamp($${n + 1}::BIGINT) AND make_timestamp($${n + 2}::BIGINT) AND (${where.sql}) AND (${sessionCond}) AND uuid IN (${uuidPh})`,
    [...where.params, lo, hi, ...uuids, ...sessions],
    { timeoutMs: h.timeoutMs, lateMaterialization: false, ...budget },
  );
  // A row of the first pass that is gone now (retention ran in between) is dropped.
  return got.rows;
}
