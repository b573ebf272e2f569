/**
 * A flush without DuckDB (docs/STORAGE.md "Parquet written by svc"): Parquet seals that this
 * process wrote hold every column of the table, one row group each, so the data file is their
 * column chunks one after the other and a new footer naming them (offsets moved, DuckLake field
 * ids added). Nothing is decoded or compressed again.
 */
import { open, readFile } from "node:fs/promises";
import { footer, PARQUET_MAGIC, type ParquetColumn, type RowGroupMeta, type TableDef } from "../../core/index.ts";
import type { TableInfo } from "../catalog-port.ts";
import type { SpoolEntry } from "./types.ts";

/**
 * Seals with fewer rows than this on average are left to DuckDB's COPY: each row group costs its
 * column metadata in the footer (about 1.5 KB for a HEP table, 7 % of 256 SIP rows), which only pays for itself with
 * rows enough (a quiet table seals a few rows every 100 ms).
 */
export const JOIN_MIN_ROWS_PER_SEAL = 256;

/** Whether `entries` can be joined as they are into one data file of `def`. */
export function joinable(def: TableDef, entries: readonly SpoolEntry[]): boolean {
  if (entries.length === 0) return false;
  let rows = 0;
  for (const e of entries) {
    if (!e.parquet?.rowGroup || e.def.columns.length !== def.columns.length) return false;
    rows += e.rows;
  }
  return rows / entries.length >= JOIN_MIN_ROWS_PER_SEAL;
}

/** Writes the data file at `abs` from the seals' row groups (joinable() must hold). */
export async function joinSeals(
  def: TableDef,
  info: TableInfo,
  entries: readonly SpoolEntry[],
  abs: string,
): Promise<void> {
  const ids = new Map(info.columns.map((c) => [c.name, c.columnId]));
  const columns: ParquetColumn[] = def.columns.map((c) => ({
    name: c.name,
    type: c.type,
    ...(ids.has(c.name) ? { fieldId: ids.get(c.name)! } : {}),
  }));
  const parts: Uint8Array[] = [PARQUET_MAGIC];
  const groups: RowGroupMeta[] = [];
  let at = PARQUET_MAGIC.length;
  for (const e of entries) {
    const g = e.parquet!.rowGroup!;
    const first = g.chunks[0]!.offset;
    const last = g.chunks[g.chunks.length - 1]!;
    const bytes = await readFile(e.file);
    const end = last.offset + last.size;
    // A seal cut short (or not ours) is left to the COPY path's reader, which checks every page.
    const tail = bytes.subarray(bytes.length - 4);
    if (bytes.length < end + 12 || tail.some((b, i) => b !== PARQUET_MAGIC[i]))
      throw new Error(`spool file ${e.file} is not the Parquet seal it was written as`);
    parts.push(bytes.subarray(first, end));
    groups.push({ rows: g.rows, chunks: g.chunks.map((c) => ({ ...c, offset: c.offset - first + at })) });
    at += end - first;
  }
  parts.push(...footer(columns, groups));
  const fh = await open(abs, "w");
  try {
    await fh.writev(parts);
  } finally {
    await fh.close();
  }
}
