/**
 * Which catalog the lake opens (storage.lakehouse.catalog_type; docs/DUCKLAKE.md "PostgreSQL
 * catalog"): the SQLite file of catalog_path, or PgCatalog over the postgres:// URL of catalog_path.
 * Also where this process keeps its spool and temporary files (state_path), since a URL has no
 * directory beside it.
 */
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import { AppError, errorMessage, type Logger, redactUrl } from "../core/index.ts";
import type { LakeCatalog } from "./catalog-port.ts";
import { ORPHAN_GRACE_MS } from "./admin/quarantine.ts";
import { CATALOG_URL_KEY, type MaintainerLock, PgCatalog } from "./catalog-pg/index.ts";

/**
 * With a shared catalog the orphan sweep leaves files younger than this alone: a stock DuckDB writer
 * reserves nothing before its commit (docs/DUCKLAKE.md "PostgreSQL catalog", "One maintainer").
 * The same grace as every orphan sweep (admin/quarantine.ts).
 */
export const ORPHAN_MIN_AGE_MS = ORPHAN_GRACE_MS;

export interface CatalogKeys {
  catalog_type: "sqlite" | "postgres";
  catalog_path: string;
  state_path?: string;
}

/** This process's state directory: state_path, else beside the SQLite file, else ./data/state. */
export function lakeStateDir(cfg: CatalogKeys): string {
  if (cfg.state_path) return resolve(cfg.state_path);
  return cfg.catalog_type === "postgres" ? resolve("./data/state") : dirname(resolve(cfg.catalog_path));
}

/**
 * Where the lake id file lives: beside the SQLite catalog, or in the data path shared by every writer
 * of a PostgreSQL catalog (processes sharing one lake share its id; src/cluster/node-identity.ts).
 */
export function lakeIdDir(cfg: CatalogKeys & { data_path: string }): string {
  return cfg.catalog_type === "postgres" ? resolve(cfg.data_path) : dirname(resolve(cfg.catalog_path));
}

/**
 * This writer's name in a shared catalog: host and its own state directory, stable across restarts
 * and distinct for two writers on one host. It owns its reservations (svc_inflight_file) and its
 * spool watermarks (`spoolMarkKey`), which belong to the spool of that state directory.
 */
export function writerOwner(stateDir: string): string {
  return `${hostname()}:${stateDir}`;
}

/**
 * The svc_writer_watermark key of a table's spool: the table key alone with a SQLite catalog (one
 * writer), `<owner>|<table key>` with a shared one. Keyed by the table alone, the writers of one
 * PostgreSQL catalog overwrote each other's mark, and a writer restarted after a kill -9 took
 * another's later mark for its own and dropped its sealed rows as committed (or replayed committed
 * ones): docs/DUCKLAKE.md "Spool watermarks".
 */
export function spoolMarkKey(owner: string | undefined, tableKey: string): string {
  return owner === undefined ? tableKey : `${owner}|${tableKey}`;
}

/** CONFIG_INVALID naming the key (password masked) unless catalog_path is a postgres://user@host/db URL. */
export function checkCatalogUrl(url: string): void {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  const ok =
    u !== undefined &&
    /^postgres(ql)?:$/.test(u.protocol) &&
    u.hostname !== "" &&
    u.username !== "" &&
    u.pathname.length > 1;
  if (!ok) {
    throw new AppError(
      "CONFIG_INVALID",
      `${CATALOG_URL_KEY}: with catalog_type postgres it must be a postgres://user:password@host:port/database URL, not ${u ? redactUrl(url) : "(not a URL)"}`,
      {
        details: { key: CATALOG_URL_KEY },
      },
    );
  }
}

/**
 * Opens the PostgreSQL catalog (a pool of 2: commits and reads; the maintainer lock holds one while
 * this process is the maintainer). A database that cannot be reached or refuses the login is a
 * configuration error of catalog_path: one line, no password (PgCatalog.open scrubs it).
 */
export async function openPgCatalog(
  url: string,
  dataPath: string,
  stateDir: string,
  log: Logger,
): Promise<{ catalog: LakeCatalog; lock: MaintainerLock }> {
  checkCatalogUrl(url);
  let cat: PgCatalog;
  try {
    // The owner of this writer's reservations outlives a restart (host + its own state directory), so
    // the next start deletes what a crash left reserved (docs/DUCKLAKE.md "PostgreSQL catalog").
    cat = await PgCatalog.open({ url, dataPath, maxConnections: 2, log, owner: writerOwner(stateDir) });
  } catch (e) {
    const msg = errorMessage(e).split("\n")[0] ?? "";
    throw new AppError("CONFIG_INVALID", msg.includes(CATALOG_URL_KEY) ? msg : `${CATALOG_URL_KEY}: ${msg}`, {
      details: { key: CATALOG_URL_KEY },
    });
  }
  return { catalog: cat, lock: cat.maintainerLock() };
}
