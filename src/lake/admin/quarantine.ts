/**
 * The start-up sweep of unreferenced data files and the quarantine folder (docs/OPERATIONS.md
 * "Orphans at start and the quarantine"). A `ducklake-*.parquet` file under the data path that the
 * catalog does not reference is either the writer's own leftover (reserved in svc_inflight_file,
 * src/lake/catalog/inflight.ts, by a flush or merge that died before its commit: deleted) or a file
 * nobody can vouch for (left out by a restore of an older backup, a rebuild that could not place
 * it, a copy from elsewhere: moved to `<data_path>/_quarantine/<UTC time>/<its path>`, never
 * deleted). Only `svc catalog quarantine --purge` deletes quarantined files. An unknown file younger
 * than ORPHAN_GRACE_MS is left in place for a later start: another writer may be about to commit it
 * (docs/STORAGE.md "Compaction, retention and orphans").
 */
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { errorMessage, type Logger } from "../../core/index.ts";
import { stamp } from "../catalog/maintenance.ts";
import { isWriterFileName, QUARANTINE_DIR, relativeToData, walkLake } from "./lake-files.ts";

/** Unreferenced files younger than this are never moved or deleted by a sweep (another writer's, in flight). */
export const ORPHAN_GRACE_MS = 3_600_000;

export interface OrphanSweep {
  /** Reserved by the writer and never committed: deleted. */
  deleted: number;
  /** Unknown to the catalog: moved into `folder`. */
  quarantined: number;
  /** Could not be moved (left in place; named in the log). */
  failed: number;
  /** Unknown but younger than the grace age: left in place for a later start. */
  young: number;
  folder?: string;
}

/**
 * Handles every unreferenced `ducklake-*.parquet` below `dataPath` (links not followed, the
 * quarantine skipped): deleted when `inflight` lists it (relative path), else quarantined.
 */
export function sweepOrphans(
  dataPath: string,
  referenced: Set<string>,
  inflight: Set<string>,
  log: Logger,
  now = new Date(),
  graceMs = ORPHAN_GRACE_MS,
): OrphanSweep {
  const out: OrphanSweep = { deleted: 0, quarantined: 0, failed: 0, young: 0 };
  const unknown: Array<{ abs: string; rel: string }> = [];
  walkLake(dataPath, (abs, name, st) => {
    if (!isWriterFileName(name) || referenced.has(abs)) return;
    const rel = relativeToData(dataPath, abs);
    // A reserved file is this catalog's own writer's, which is not running: deleted at any age.
    if (inflight.has(rel)) {
      rmSync(abs, { force: true });
      out.deleted++;
    } else if (st.mtimeMs > now.getTime() - graceMs) out.young++;
    else unknown.push({ abs, rel });
  });
  if (unknown.length === 0) return out;
  const root = lstatSync(join(dataPath, QUARANTINE_DIR), { throwIfNoEntry: false });
  if (root && !root.isDirectory()) {
    // A link (or a file) there would carry the files out of the data path: nothing is moved.
    out.failed = unknown.length;
    log.error("the quarantine folder is not a directory (a link?); unreferenced data files left in place", {
      folder: join(dataPath, QUARANTINE_DIR),
      files: unknown.length,
    });
    return out;
  }
  const folder = join(dataPath, QUARANTINE_DIR, stamp(now));
  for (const f of unknown) {
    const dest = join(folder, f.rel);
    try {
      mkdirSync(dirname(dest), { recursive: true });
      renameSync(f.abs, dest);
      out.quarantined++;
    } catch (e) {
      out.failed++;
      log.error("could not move an unreferenced data file into the quarantine; left in place", {
        file: f.abs,
        error: errorMessage(e),
      });
    }
  }
  if (out.quarantined > 0) out.folder = folder;
  return out;
}

export interface QuarantineEntry {
  /** `<data_path>/_quarantine/<UTC time>`. */
  folder: string;
  files: number;
  bytes: number;
}

/** The quarantine folders, oldest first, with their files and bytes (links counted as files, not followed). */
export function listQuarantine(dataPath: string): QuarantineEntry[] {
  const root = join(dataPath, QUARANTINE_DIR);
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch {
    return [];
  }
  return names.map((n) => {
    const e: QuarantineEntry = { folder: join(root, n), files: 0, bytes: 0 };
    const walk = (p: string) => {
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) return;
      if (st.isDirectory()) for (const c of readdirSync(p)) walk(join(p, c));
      else {
        e.files++;
        e.bytes += st.size;
      }
    };
    walk(e.folder);
    return e;
  });
}

/** Deletes the quarantine folder (the operator's word, `svc catalog quarantine --purge`). rm never follows links. */
export function purgeQuarantine(dataPath: string): QuarantineEntry[] {
  const list = listQuarantine(dataPath);
  rmSync(join(dataPath, QUARANTINE_DIR), { recursive: true, force: true });
  return list;
}
