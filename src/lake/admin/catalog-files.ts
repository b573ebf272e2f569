/**
 * The catalog file's neighbours for the offline tools (docs/OPERATIONS.md): restore and rebuild take
 * the writer lock `<catalog>.lock` themselves (docs/OPERATIONS.md "Restore": the appliance stopped), so a
 * `svc serve` cannot start in the middle, and are refused with the running writer's pid while it
 * holds the lock (docs/DUCKLAKE.md "Lock"); a new catalog file is swapped in without a moment in
 * which there is none; temp files of a killed tool are cleaned up.
 */
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, linkSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { AppError, type Logger } from "../../core/index.ts";
import { acquireCatalogLock, type CatalogLock } from "../catalog/lock.ts";
import { fsyncPath } from "../catalog/maintenance.ts";

export function takeWriterLock(catalogPath: string, what: string, log: Logger): CatalogLock {
  try {
    return acquireCatalogLock(catalogPath, log);
  } catch (e) {
    if (e instanceof AppError && e.code === "CATALOG_LOCKED") {
      const pid = e.details?.pid;
      const host = e.details?.hostname;
      const who =
        typeof pid === "number" ? `pid ${pid}${typeof host === "string" ? ` on ${host}` : ""}` : "another process";
      throw new AppError(
        "CATALOG_LOCKED",
        `${what} refused: ${who} holds the writer lock ${catalogPath}.lock (svc serve is running); stop it first`,
        {
          cause: e,
          details: e.details,
        },
      );
    }
    throw e;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Deletes what a killed backup, restore or rebuild left beside the catalog: `<catalog>.bak-….tmp-<pid>`,
 * `<catalog>.restore-tmp-<pid>`, `<catalog>.rebuild-tmp-<pid>` (and its -wal, -shm, -journal (VACUUM INTO's rollback journal), .lock) of a pid
 * that no longer runs. Never a finished backup.
 */
export function removeStaleTemps(catalogPath: string): string[] {
  const dir = dirname(catalogPath);
  const base = basename(catalogPath);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const n of names) {
    if (!n.startsWith(base)) continue;
    const m = /^(?:\.bak-\d{8}T\d{9}Z\.tmp-|\.restore-tmp-|\.rebuild-tmp-)(\d+)(?:-wal|-shm|-journal|\.lock)?$/.exec(
      n.slice(base.length),
    );
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) {
      rmSync(join(dir, n), { force: true });
      removed.push(join(dir, n));
    }
  }
  return removed;
}

/** SQLite's own companions of a database file in WAL mode. */
const COMPANIONS = ["-wal", "-shm"];

/**
 * Puts `fresh` (a closed SQLite file without companions) at `catalogPath`, keeping the current
 * catalog as `aside` (with copies of its -wal and -shm). The current catalog is checkpointed first
 * when it still opens, so its main file alone holds every commit. There is never a moment without
 * a file at `catalogPath`: `svc serve` started then would create an empty catalog and delete the
 * lake's files as orphans. Returns `aside`, or undefined when there was no catalog.
 */
export function swapCatalog(catalogPath: string, fresh: string, aside: string): string | undefined {
  if (!existsSync(catalogPath)) {
    renameSync(fresh, catalogPath);
    fsyncPath(dirname(catalogPath));
    return undefined;
  }
  try {
    const db = new Database(catalogPath, { readwrite: true });
    try {
      db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
  } catch {
    // a damaged catalog: its WAL is copied aside as it is
  }
  try {
    linkSync(catalogPath, aside);
  } catch {
    copyFileSync(catalogPath, aside);
  }
  for (const c of COMPANIONS) if (existsSync(catalogPath + c)) copyFileSync(catalogPath + c, aside + c);
  for (const c of ["", ...COMPANIONS]) if (existsSync(aside + c)) fsyncPath(aside + c);
  // The old WAL must not meet the new main file: SQLite would replay it into it.
  for (const c of COMPANIONS) rmSync(catalogPath + c, { force: true });
  renameSync(fresh, catalogPath);
  fsyncPath(dirname(catalogPath));
  return aside;
}
