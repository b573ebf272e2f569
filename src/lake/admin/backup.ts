/**
 * `svc catalog backup|list|restore` (docs/OPERATIONS.md "Catalog backups").
 * A backup is a consistent online copy `<catalog>.bak-<UTC time>` (VACUUM INTO, see
 * src/lake/catalog/maintenance.ts) taken through a read-only connection, so it runs while the
 * appliance writes; the newest `backups_kept` are kept. A restore needs the writer stopped (it
 * takes the writer lock), checks the backup strictly before it touches anything (restore-check.ts:
 * a backup is not trusted), and keeps the catalog it replaces as `<catalog>.pre-restore.<UTC time>`.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { AppError, errorMessage, type Logger } from "../../core/index.ts";
import { dropInflightRows, openCatalog } from "../catalog/index.ts";
import { fsyncPath, stamp as fileStamp } from "../catalog/maintenance.ts";
import { removeStaleTemps, swapCatalog, takeWriterLock } from "./catalog-files.ts";
import { writerFiles } from "./lake-files.ts";
import { checkRestoreCopy, copyCheckedBackup } from "./restore-check.ts";

export interface CatalogPaths {
  catalogPath: string;
  dataPath: string;
  log: Logger;
}

export interface BackupEntry {
  path: string;
  /** When the backup was taken (from its name), ISO 8601 UTC. */
  takenAt: string;
  sizeBytes: number;
  /** Newest snapshot in the backup; null when it cannot be read (`problem` says why). */
  snapshotId: number | null;
  snapshotTime: string | null;
  problem?: string;
}

const STAMP = /\.bak-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/;

/** Newest snapshot of a catalog file, read without the DuckLake checks (a damaged file still lists). */
function newestSnapshot(path: string): { snapshotId: number; snapshotTime: string } {
  const db = new Database(path, { readonly: true });
  try {
    // A backup is not trusted (restore-check.ts): read from a plain table only, never a view.
    db.run("PRAGMA trusted_schema = OFF");
    const kind = db
      .query<{ type: string }, []>("SELECT type FROM sqlite_master WHERE name = 'ducklake_snapshot'")
      .get();
    if (kind?.type !== "table") throw new Error("no ducklake_snapshot table");
    const r = db
      .query<{ snapshot_id: number; snapshot_time: string }, []>(
        "SELECT snapshot_id, snapshot_time FROM ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1",
      )
      .get();
    if (r === null) throw new Error("no snapshot");
    return { snapshotId: r.snapshot_id, snapshotTime: r.snapshot_time };
  } finally {
    db.close();
  }
}

function describe(path: string): BackupEntry {
  const st = statSync(path);
  const m = STAMP.exec(path);
  const takenAt = m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : st.mtime.toISOString();
  try {
    return { path, takenAt, sizeBytes: st.size, ...newestSnapshot(path) };
  } catch (e) {
    return {
      path,
      takenAt,
      sizeBytes: st.size,
      snapshotId: null,
      snapshotTime: null,
      problem: `unreadable: ${errorMessage(e)}`,
    };
  }
}

/** Backups of the catalog, newest first. */
export function listCatalogBackups(catalogPath: string): BackupEntry[] {
  const abs = resolve(catalogPath);
  const dir = dirname(abs);
  const prefix = `${basename(abs)}.bak-`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && !n.includes(".tmp-"))
    .sort()
    .reverse()
    .map((n) => describe(join(dir, n)));
}

/**
 * Takes a backup while the appliance may be writing, then deletes all but the newest `keep`
 * backups (`keep` 0: none deleted). Returns the new backup and the deleted ones.
 */
export function backupCatalog(p: CatalogPaths, keep: number): { backup: BackupEntry; pruned: string[] } {
  removeStaleTemps(resolve(p.catalogPath));
  const catalog = openCatalog({ path: p.catalogPath, dataPath: p.dataPath, readOnly: true, create: false, log: p.log });
  try {
    const path = catalog.backup();
    const pruned = keep > 0 ? catalog.pruneBackups(keep) : [];
    return { backup: describe(path), pruned };
  } finally {
    catalog.close();
  }
}

/** The backup `from` names: a path, a file name beside the catalog, or the time part after `.bak-`. */
export function resolveBackup(catalogPath: string, from: string | undefined): string {
  const abs = resolve(catalogPath);
  if (from === undefined) {
    const newest = listCatalogBackups(abs)[0];
    if (!newest) throw new AppError("NOT_FOUND", `no backup of ${abs} to restore (svc catalog backup makes one)`);
    return newest.path;
  }
  const candidates = isAbsolute(from) ? [from] : [resolve(from), join(dirname(abs), from), `${abs}.bak-${from}`];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (!found) throw new AppError("NOT_FOUND", `backup ${from} not found (svc catalog list shows the backups)`);
  return found;
}

export interface RestoreReport {
  from: string;
  snapshotId: number;
  snapshotTime: string;
  /** Where the replaced catalog went; undefined when there was none. */
  savedAs?: string;
  /** Data files (ducklake-*.parquet) on disk the restored catalog does not reference. */
  unreferencedFiles: number;
}

/**
 * Replaces the catalog by a backup. Refused while a writer holds the lock, and when the backup is
 * not exactly a catalog of ours (restore-check.ts: schema, integrity, names, paths), fails the
 * DuckLake checks, or lists data files that no longer exist (compaction or retention deleted them
 * after the backup was taken). A refusal changes nothing on disk.
 */
export function restoreCatalog(p: CatalogPaths, from: string | undefined): RestoreReport {
  const catalogPath = resolve(p.catalogPath);
  const source = resolveBackup(catalogPath, from);
  if (resolve(source) === catalogPath)
    throw new AppError("VALIDATION", `${source} is the catalog itself, not a backup`);
  const lock = takeWriterLock(catalogPath, "restore", p.log);
  const tmp = `${catalogPath}.restore-tmp-${process.pid}`;
  const dropTmp = () => {
    for (const s of ["", "-journal", "-wal", "-shm"]) rmSync(tmp + s, { force: true });
  };
  try {
    removeStaleTemps(catalogPath);
    dropTmp();
    let unreferencedFiles = 0;
    let snap;
    try {
      // The backup itself is only read (sqlite_master, integrity) and copied; every other check
      // and the swap use the private copy (restore-check.ts).
      copyCheckedBackup(source, tmp);
      checkRestoreCopy(tmp, source, p.dataPath);
      const check = openCatalog({ path: tmp, dataPath: p.dataPath, readOnly: true, create: false, log: p.log });
      try {
        const integrity = check.integrityCheck();
        if (!integrity.ok)
          throw new AppError(
            "CATALOG_CORRUPT",
            `backup ${source} is damaged: ${integrity.problems.slice(0, 3).join("; ")}`,
          );
        const missing: string[] = [];
        for (const t of check.listTables()) {
          for (const f of check.listDataFiles(t.tableId, { stats: false }))
            if (!isRegularFile(f.absolutePath)) missing.push(f.absolutePath);
        }
        if (missing.length > 0) {
          throw new AppError(
            "CONFLICT",
            `backup ${source} lists ${missing.length} data file(s) that no longer exist (first: ${missing[0]}); compaction or retention deleted them after the backup: restore a newer backup or run svc system --rebuild-catalog`,
            { details: { missing: missing.length } },
          );
        }
        const referenced = check.referencedPaths();
        unreferencedFiles = writerFiles(check.dataPath).filter((f) => !referenced.has(f)).length;
        snap = check.currentSnapshot();
      } finally {
        check.close();
      }
      // Reservations of files in flight belong to the catalog the backup was taken from (inflight.ts).
      const rw = new Database(tmp, { readwrite: true });
      try {
        dropInflightRows(rw);
      } finally {
        rw.close();
      }
      fsyncPath(tmp);
    } catch (e) {
      dropTmp();
      throw e;
    }
    const savedAs = swapCatalog(catalogPath, tmp, `${catalogPath}.pre-restore.${fileStamp(new Date())}`);
    p.log.info("catalog restored", { from: source, snapshot: snap.snapshotId, savedAs });
    return {
      from: source,
      snapshotId: snap.snapshotId,
      snapshotTime: snap.time,
      ...(savedAs ? { savedAs } : {}),
      unreferencedFiles,
    };
  } finally {
    lock.release();
  }
}

const isRegularFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() === true;
