/**
 * Rows of several tables committed in ONE catalog transaction together with writer marks
 * (docs/DEPLOY.md "Where the central keeps an edge's position"): the central's forward receiver
 * hands the rows of its senders' batches here, and each sender's position (`forward:<sender>`)
 * is committed with exactly those rows, so a kill -9 at any point leaves either both or neither.
 * The rows never enter the spool (whose files come back at start above the table's watermark):
 * they are written to temporary CSV files in the spool format, turned into Parquet and committed;
 * the temporary files are removed, whatever happened, and any left by a crash are removed at start.
 */
import { mkdirSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AppError, csvColumns, type TableDef } from "../../core/index.ts";
import type { NewDataFile, TableInfo, WriterMark } from "../catalog-port.ts";
import { writeTableFiles, type TableFilesTarget } from "./table-files.ts";
import type { SpoolEntry, WriterMetrics, WriterOptions } from "./types.ts";

/** CSV rows of one table as a BatchSink sealed them (uuid columns first, `columns` per row). */
export interface GroupBatch {
  key: string;
  bytes: Uint8Array;
  rows: number;
  columns: number;
  span?: { min: number; max: number };
  /** The table's layout the rows were written with, when it may have grown since (line protocol). */
  layout?: TableDef;
}

export interface GroupCommitContext {
  files: TableFilesTarget;
  /** Where the temporary CSV files go (emptied at start: nothing there survives a crash usefully). */
  tmpDir: string;
  table(key: string): { def: TableDef; info: TableInfo } | undefined;
  /** The writer's commit gate: readers pairing files with the buffer never see half of it. */
  gate(step: () => Promise<void>): Promise<void>;
  remote: WriterOptions["remote"];
  metrics: WriterMetrics;
  changed(key: string): Promise<void>;
}

/** Empties the temporary directory (at start). */
export function clearGroupTmp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

let fileSeq = 0;

/**
 * Writes and commits `batches` with `marks` in one transaction. Throws when any step fails; then
 * nothing is committed (the written Parquet files are removed) and the caller still holds the rows.
 * No rows at all: the marks alone (LakeCatalog.commitMarks), for positions over batches whose
 * records were all refused for good (docs/DEPLOY.md "Where the central keeps an edge's position").
 */
export async function commitGroup(
  ctx: GroupCommitContext,
  batches: readonly GroupBatch[],
  marks: readonly WriterMark[],
): Promise<void> {
  const byKey = new Map<string, GroupBatch[]>();
  for (const b of batches) if (b.rows > 0) byKey.set(b.key, [...(byKey.get(b.key) ?? []), b]);
  if (byKey.size === 0) {
    if (marks.length > 0) await ctx.gate(() => ctx.files.catalog.commitMarks(marks));
    return;
  }
  mkdirSync(ctx.tmpDir, { recursive: true });
  const tmp: string[] = [];
  const work: Array<{ key: string; tableId: number; files: NewDataFile[]; rows: number }> = [];
  const now = Date.now();
  try {
    for (const [key, list] of byKey) {
      const t = ctx.table(key);
      if (!t) throw new AppError("UNAVAILABLE", `table ${key} is not open in the lake`);
      const entries: SpoolEntry[] = [];
      for (const b of list) {
        const layout = b.layout ?? t.def;
        const want = csvColumns(layout).length;
        if (b.columns !== want)
          throw new AppError(
            "CONFLICT",
            `rows of ${key} were written with ${b.columns} columns, the layout has ${want}`,
          );
        const file = join(ctx.tmpDir, `${now}-${++fileSeq}.csv`);
        tmp.push(file);
        await writeFile(file, b.bytes);
        entries.push({ seq: fileSeq, file, rows: b.rows, def: layout, atMs: now, ...(b.span ? { span: b.span } : {}) });
      }
      const w = {
        key,
        tableId: t.info.tableId,
        files: [] as NewDataFile[],
        rows: entries.reduce((a, e) => a + e.rows, 0),
      };
      work.push(w);
      await writeTableFiles(ctx.files, t.def, t.info, entries, w.files);
    }
    const all = work.flatMap((w) => w.files.map((f) => join(ctx.files.dataPath, f.path)));
    if (ctx.remote) await ctx.remote.upload(all);
    await ctx.gate(async () => {
      const { snapshotId } = await ctx.files.catalog.commitInserts(
        work.map((w) => ({ tableId: w.tableId, files: w.files })),
        marks,
      );
      ctx.metrics.snapshot.set(snapshotId);
    });
    ctx.remote?.committed(all);
  } catch (e) {
    for (const w of work) for (const f of w.files) rmSync(join(ctx.files.dataPath, f.path), { force: true });
    throw e;
  } finally {
    for (const f of tmp) rmSync(f, { force: true });
  }
  for (const w of work) {
    ctx.metrics.rowsWritten.inc({ table: w.key }, w.rows);
    ctx.metrics.filesWritten.inc({ table: w.key }, w.files.length);
    await ctx.changed(w.key);
  }
}
