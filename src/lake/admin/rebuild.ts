/**
 * `svc system --rebuild-catalog [--rebuild-cleanup-orphans]` (docs/OPERATIONS.md
 * "Rebuilding the catalog"): a new DuckLake catalog made from the Parquet files alone. With the
 * writer stopped (its lock held throughout), every Parquet file under the data path is placed in
 * its table by the path layout, described from its own footer (parquet-footer.ts) and registered
 * in place; copies a newer file supersedes (compaction sources awaiting expiry) are registered and
 * retired in the same way compaction retires them. The new catalog is built beside the old one and
 * swapped in at the end; the old one is kept as `<catalog>.corrupt.<UTC time>`. Each file is
 * judged on its own (table-shape.ts): one that cannot be placed is reported and deleted only with
 * `cleanupOrphans`. Symbolic links are reported and never followed nor deleted (lake-files.ts).
 */
import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AppError, errorMessage } from "../../core/index.ts";
import { openCatalog, type Catalog, type NewDataFile } from "../catalog/index.ts";
import { fsyncPath, stamp } from "../catalog/maintenance.ts";
import type { CatalogPaths } from "./backup.ts";
import { scanLakeFiles } from "./lake-files.ts";
import { readParquetFacts } from "./parquet-footer.ts";
import { spoolState } from "./spool-check.ts";
import { ContentChecker, findSuperseded, type ScannedFile } from "./superseded.ts";
import { tableShape, type TableShape } from "./table-shape.ts";
import { removeStaleTemps, swapCatalog, takeWriterLock } from "./catalog-files.ts";

export interface RebuildOptions extends CatalogPaths {
  cleanupOrphans: boolean;
  /** DuckDB for the content checks (storage.lakehouse.tuning). */
  engine: { threads: number; memoryLimit: string; tempDirectory: string };
}

export interface RebuiltTable {
  table: string;
  columns: number;
  partitionBy?: string;
  /** Live files and their rows. */
  files: number;
  rows: number;
  /** Files registered and retired as copies of rows a newer file holds. */
  superseded: number;
  spool?: string;
}

export interface Orphan {
  path: string;
  reason: string;
  removed: boolean;
}

export interface RebuildReport {
  catalogPath: string;
  /** Where the previous catalog went (absent when there was none). */
  savedAs?: string;
  /** What could be taken from the previous catalog: only the writer's spool watermarks. */
  oldCatalog: string;
  tables: RebuiltTable[];
  orphans: Orphan[];
  /** Symbolic links under the data path: not followed, not registered, never deleted. */
  links: string[];
  snapshotId: number;
}

/** The writer's spool watermarks from the old catalog, when it can still be read. */
function oldWatermarks(catalogPath: string): { marks: Map<string, number>; state: string } {
  if (!existsSync(catalogPath)) return { marks: new Map(), state: "absent" };
  try {
    const db = new Database(catalogPath, { readonly: true });
    try {
      // Read-only and from a plain table only: a damaged catalog is not trusted to hold no views.
      db.run("PRAGMA trusted_schema = OFF");
      const kind = db
        .query<{ type: string }, []>("SELECT type FROM sqlite_master WHERE name = 'svc_writer_watermark'")
        .get();
      if (kind?.type !== "table") throw new Error("no svc_writer_watermark table");
      const rows = db
        .query<{ writer_key: string; watermark: number }, []>("SELECT writer_key, watermark FROM svc_writer_watermark")
        .all();
      return {
        marks: new Map(rows.map((r) => [r.writer_key, r.watermark])),
        state: `readable (${rows.length} spool watermarks taken over)`,
      };
    } finally {
      db.close();
    }
  } catch (e) {
    return { marks: new Map(), state: `unreadable (${errorMessage(e)}); spool watermarks recovered from the files` };
  }
}

const SIDE_FILES = ["", "-wal", "-shm"];

export async function rebuildCatalog(o: RebuildOptions): Promise<RebuildReport> {
  const catalogPath = resolve(o.catalogPath);
  const dataPath = resolve(o.dataPath);
  if (!existsSync(dataPath)) throw new AppError("NOT_FOUND", `data path ${dataPath} does not exist`);
  const lock = takeWriterLock(catalogPath, "rebuild", o.log);
  let checker: ContentChecker | undefined;
  const getChecker = async () => (checker ??= await ContentChecker.open(o.engine));
  const tmp = `${catalogPath}.rebuild-tmp-${process.pid}`;
  try {
    removeStaleTemps(catalogPath);
    const old = oldWatermarks(catalogPath);
    const scan = scanLakeFiles(dataPath);
    const orphans: Array<{ path: string; reason: string }> = scan.unplaced.map((u) => ({
      path: u.abs,
      reason: u.reason,
    }));
    const byTable = new Map<string, ScannedFile[]>();
    for (const f of scan.placed) {
      try {
        const facts = await readParquetFacts(f.abs);
        const key = `${f.schema}.${f.table}`;
        byTable.set(key, [...(byTable.get(key) ?? []), { file: f, facts }]);
      } catch (e) {
        orphans.push({ path: f.abs, reason: errorMessage(e) });
      }
    }
    for (const s of SIDE_FILES) rmSync(tmp + s, { force: true });
    const cat = openCatalog({ path: tmp, dataPath, log: o.log });
    const tables: RebuiltTable[] = [];
    let snapshotId = 0;
    try {
      // DuckDB resolves names case-insensitively: directories differing only by case are one table
      // to it. The one with the most files is the table.
      const winner = new Map<string, string>();
      for (const [key, files] of byTable) {
        const w = winner.get(key.toLowerCase());
        if (w === undefined || files.length > byTable.get(w)!.length) winner.set(key.toLowerCase(), key);
      }
      for (const key of [...byTable.keys()].sort()) {
        const same = winner.get(key.toLowerCase())!;
        if (same !== key) {
          for (const f of byTable.get(key)!)
            orphans.push({ path: f.file.abs, reason: `table ${key} differs from ${same} only by case` });
          continue;
        }
        const shape = tableShape(byTable.get(key)!);
        for (const m of shape.misfits) orphans.push({ path: m.file.file.abs, reason: m.reason });
        if (shape.refused !== undefined) {
          for (const f of shape.files) orphans.push({ path: f.file.abs, reason: shape.refused });
          continue;
        }
        try {
          tables.push(
            await registerTable(
              cat,
              key,
              shape,
              old.marks.get(key) ?? null,
              join(dirname(catalogPath), "spool", key),
              getChecker,
            ),
          );
        } catch (e) {
          // Not a file's fault: stop before the swap, so the old catalog and every file stay as they are.
          throw new AppError("INTERNAL", `rebuild stopped at table ${key}, nothing changed: ${errorMessage(e)}`, {
            cause: e,
          });
        }
      }
    } finally {
      snapshotId = cat.currentSnapshot().snapshotId;
      cat.close();
    }
    for (const c of SIDE_FILES.slice(1)) rmSync(tmp + c, { force: true });
    fsyncPath(tmp);
    const savedAs = swapCatalog(catalogPath, tmp, `${catalogPath}.corrupt.${stamp(new Date())}`);
    const done: Orphan[] = orphans.map((x) => {
      if (!o.cleanupOrphans) return { ...x, removed: false };
      rmSync(x.path, { force: true });
      return { ...x, removed: true };
    });
    o.log.info("catalog rebuilt from the Parquet files", {
      catalog: catalogPath,
      savedAs,
      tables: tables.length,
      orphans: done.length,
      snapshot: snapshotId,
    });
    if (scan.links.length > 0)
      o.log.warn("symbolic links under the data path were not followed", { links: scan.links.length });
    return {
      catalogPath,
      ...(savedAs ? { savedAs } : {}),
      oldCatalog: old.state,
      tables,
      orphans: done,
      links: scan.links,
      snapshotId,
    };
  } finally {
    for (const s of SIDE_FILES) rmSync(tmp + s, { force: true });
    rmSync(`${tmp}.lock`, { force: true });
    checker?.close();
    lock.release();
  }
}

const toNewFile = (s: ScannedFile): NewDataFile => ({
  path: s.file.rel,
  recordCount: s.facts.recordCount,
  fileSizeBytes: s.facts.fileSizeBytes,
  footerSize: s.facts.footerSize,
  columnStats: s.facts.columnStats,
  ...(s.file.partition ? { partitionValues: { [s.file.partition.column]: s.file.partition.value } } : {}),
});

/**
 * One table: created, superseded copies registered and retired, then the live files registered
 * together with the writer's spool watermark (one snapshot each step).
 */
async function registerTable(
  cat: Catalog,
  key: string,
  shape: TableShape,
  oldMark: number | null,
  spoolDir: string,
  checker: () => Promise<ContentChecker>,
): Promise<RebuiltTable> {
  const [schema, name] = [key.slice(0, key.indexOf(".")), key.slice(key.indexOf(".") + 1)];
  const uuidCol = shape.columns[0]?.name === "uuid" && shape.columns[0].type === "varchar" ? "uuid" : undefined;
  const superseded = await findSuperseded(shape.files, uuidCol, checker);
  const live = shape.files.filter((f) => !superseded.has(f.file.abs));
  const old = shape.files.filter((f) => superseded.has(f.file.abs));
  const spool = await spoolState(spoolDir, oldMark, uuidCol, live, checker);
  const info = cat.ensureTable(schema, {
    name,
    columns: shape.columns,
    ...(shape.partitionBy ? { partitionBy: shape.partitionBy } : {}),
  });
  const mismatch = info.columns.find((c, i) => c.columnId !== i + 1 || c.name !== shape.columns[i]?.name);
  if (mismatch) throw new AppError("CONFLICT", `column ${mismatch.name} got id ${mismatch.columnId}`);
  if (old.length > 0) {
    cat.commitDataFiles(info.tableId, old.map(toNewFile));
    const oldPaths = new Set(old.map((f) => f.file.abs));
    cat.retireDataFiles(
      info.tableId,
      cat
        .listDataFiles(info.tableId, { stats: false })
        .filter((f) => oldPaths.has(f.absolutePath))
        .map((f) => f.dataFileId),
    );
  }
  const mark = spool.watermark === null ? undefined : { writerKey: key, watermark: spool.watermark };
  cat.commitDataFiles(info.tableId, live.map(toNewFile), mark);
  return {
    table: key,
    columns: shape.columns.length,
    ...(shape.partitionBy ? { partitionBy: shape.partitionBy } : {}),
    files: live.length,
    rows: live.reduce((n, f) => n + f.facts.recordCount, 0),
    superseded: old.length,
    ...(spool.note ? { spool: spool.note } : {}),
  };
}
