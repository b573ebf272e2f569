/**
 * What the lake holds, from catalog statistics and the buffer without reading Parquet: files and
 * rows per table (node metadata, metrics) and the row count and time span over every table
 * (node metadata endpoints, `has_data` pruning).
 */
import { parseTimestampUs, type TableDef } from "../core/index.ts";
import type { LakeCatalog, TableInfo } from "./catalog-port.ts";
import type { QueryResult } from "./engine.ts";
import { ident, tableKey } from "./sql.ts";
import type { LakeWriter } from "./writer/writer.ts";

export interface TableStats {
  key: string;
  files: number;
  rows: number;
  bytes: number;
  minTs: string | null;
  maxTs: string | null;
}

type Defs = ReadonlyMap<string, { def: TableDef; info: TableInfo }>;

/** Files and rows per table at the current snapshot. */
export async function tableStats(catalog: LakeCatalog, defs: Defs): Promise<TableStats[]> {
  const out: TableStats[] = [];
  for (const [key, { def, info }] of defs.entries()) {
    const files = await catalog.listDataFiles(info.tableId, { statsColumns: [def.timeColumn] });
    let rows = 0;
    let bytes = 0;
    let minTs: string | null = null;
    let maxTs: string | null = null;
    for (const f of files) {
      rows += f.recordCount;
      bytes += f.fileSizeBytes;
      const s = f.columnStats[def.timeColumn];
      if (s?.min && (minTs === null || s.min < minTs)) minTs = s.min;
      if (s?.max && (maxTs === null || s.max > maxTs)) maxTs = s.max;
    }
    out.push({ key, files: files.length, rows, bytes, minTs, maxTs });
  }
  return out;
}

/** Row count and time span (epoch µs) over every table: committed files plus the buffer. */
export async function lakeSummary(
  catalog: LakeCatalog,
  writer: LakeWriter,
  defs: Defs,
  query: (sql: string) => Promise<QueryResult>,
): Promise<{ rows: number; minUs: number | null; maxUs: number | null }> {
  let rows = 0;
  let minUs: number | null = null;
  let maxUs: number | null = null;
  const widen = (lo: number | null, hi: number | null) => {
    if (lo !== null && (minUs === null || lo < minUs)) minUs = lo;
    if (hi !== null && (maxUs === null || hi > maxUs)) maxUs = hi;
  };
  // Catalog and buffer captured as one cut inside the writer's commit gate (a flush moves rows
  // between them; src/lake/writer/commit-gate.ts). The buffer's time span comes from the spans
  // its batches kept while they were written; only spool files without one (recovered at start,
  // NULL times) are read.
  const buffers: Array<{ def: TableDef; parts: string[] }> = [];
  await writer.consistent(async () => {
    for (const t of await tableStats(catalog, defs)) {
      rows += t.rows;
      widen(parseTimestampUs(t.minTs), parseTimestampUs(t.maxTs));
    }
    for (const { def } of defs.values()) {
      const key = tableKey(def);
      const entries = writer.buffer(key);
      const unknown = entries.filter((e) => !e.span);
      for (const e of entries) {
        rows += e.rows;
        if (e.span) widen(e.span.min, e.span.max);
      }
      if (unknown.length) buffers.push({ def, parts: writer.bufferSelects(key, unknown) });
    }
  });
  for (const b of buffers) {
    const col = ident(b.def.timeColumn);
    const r = await query(
      `SELECT epoch_us(min(${col})) AS lo, epoch_us(max(${col})) AS hi FROM (${b.parts.join(" UNION ALL ")})`,
    );
    const row = r.rows[0] ?? {};
    widen(
      row.lo === null || row.lo === undefined ? null : Number(row.lo),
      row.hi === null || row.hi === undefined ? null : Number(row.hi),
    );
  }
  return { rows, minUs, maxUs };
}

/** A catalog table as the lake describes it (defined in this process or not). */
export const storedTable = (t: TableInfo): Pick<TableDef, "schema" | "name" | "columns"> => ({
  schema: t.schemaName,
  name: t.name,
  columns: t.columns.map((c) => ({ name: c.name, type: c.type })),
});
