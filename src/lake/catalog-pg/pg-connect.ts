/**
 * Opening a PostgreSQL catalog (docs/DUCKLAKE.md "PostgreSQL catalog"): the options, the pool of
 * Bun.SQL connections, creating or checking the DuckLake tables, and errors that name
 * CATALOG_URL_KEY and never the password. src/lake/catalog-pg/pg-catalog.ts builds the catalog on it.
 */
import { hostname } from "node:os";
import { resolve } from "node:path";
import { AppError, createLogger, type Logger, redactUrl } from "../../core/index.ts";
import { type PgCtx, prepareCatalog } from "./pg-db.ts";
import { type RetryStats, toAppError, withRetry } from "./pg-errors.ts";
import * as inflight from "./pg-inflight.ts";

/** The configuration key the catalog URL comes from, named in every error of opening it. */
export const CATALOG_URL_KEY = "storage.lakehouse.catalog_path";

export interface PgCatalogOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Directory the catalog's relative paths are below (the lake's data path). */
  dataPath: string;
  /** Create the DuckLake tables in an empty database (default true). */
  create?: boolean;
  /** Pool size, 1 or 2 (default 2): one for commits, one for reads. */
  maxConnections?: 1 | 2;
  /** Attempts of one commit before it fails with CONFLICT (default 20). */
  maxAttempts?: number;
  /** Owner of this writer's in-flight reservations (default `<hostname>/<pid>`: this process). */
  owner?: string;
  log?: Logger;
}

export /** An error message without the password, raw or URL-decoded (a driver may quote the URL). */
function scrubbed(e: AppError, url: string): AppError {
  let password = "";
  try {
    password = new URL(url).password;
  } catch {
    return e;
  }
  if (password === "") return e;
  const secrets = [password, decodeURIComponent(password)].filter((s) => s.length > 0);
  if (!secrets.some((s) => e.message.includes(s))) return e;
  let message = e.message;
  for (const s of secrets) message = message.replaceAll(s, "***");
  // The cause (the driver's error) is left out: it may carry the same text.
  return new AppError(e.code, message, { details: e.details });
}

/**
 * Connects, creates the DuckLake tables in an empty database (`create`), checks them (retried as a
 * commit is, counted in `stats`); on failure closes the pool and throws without the password.
 */
export async function connectCatalog(
  opts: PgCatalogOptions,
  maxAttempts: number,
  stats: RetryStats,
): Promise<{ ctx: PgCtx; owner: string }> {
  const where = redactUrl(opts.url);
  const what = `opening catalog ${where} (${CATALOG_URL_KEY})`;
  if (!/^postgres(ql)?:\/\//.test(opts.url))
    throw new AppError("CONFIG_INVALID", `${CATALOG_URL_KEY}: ${where} is not a postgres:// URL`, {
      details: { key: CATALOG_URL_KEY },
    });
  const dataPath = resolve(opts.dataPath);
  const owner = opts.owner ?? `${hostname()}/${process.pid}`;
  // Connections name their owner (pg-inflight.ts ownerTag); Bun.SQL, not an import, loads bun:sql only here (docs/ARCHITECTURE.md "Start-up").
  const sql = new Bun.SQL(opts.url, {
    max: opts.maxConnections ?? 2,
    idleTimeout: 60,
    connectionTimeout: 10,
    connection: { application_name: inflight.ownerTag(owner) },
  });
  const ctx: PgCtx = {
    sql,
    dataPath: dataPath.endsWith("/") ? dataPath : `${dataPath}/`,
    where,
    log: opts.log ?? createLogger({ catalog: where }),
  };
  try {
    await withRetry(what, maxAttempts, stats, () => prepareCatalog(ctx, opts.create ?? true));
  } catch (e) {
    await sql.close({ timeout: 0 });
    const err = scrubbed(toAppError(what, e), opts.url);
    throw new AppError(err.code, err.message, { cause: err, details: { ...err.details, key: CATALOG_URL_KEY } });
  }
  return { ctx, owner };
}
