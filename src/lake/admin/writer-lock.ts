/**
 * Offline catalog operations (restore, rebuild) take the writer lock `<catalog>.lock` themselves
 * (spec doc 2, Recovery: "writer stopped"), so a `svc serve` cannot start in the middle, and are
 * refused with the running writer's pid while it holds the lock (docs/DUCKLAKE.md "Lock").
 */
import { AppError, type Logger } from "../../core/index.ts";
import { acquireCatalogLock, type CatalogLock } from "../catalog/lock.ts";

export function takeWriterLock(catalogPath: string, what: string, log: Logger): CatalogLock {
  try {
    return acquireCatalogLock(catalogPath, log);
  } catch (e) {
    if (e instanceof AppError && e.code === "CATALOG_LOCKED") {
      const pid = e.details?.pid;
      const host = e.details?.hostname;
      const who = typeof pid === "number" ? `pid ${pid}${typeof host === "string" ? ` on ${host}` : ""}` : "another process";
      throw new AppError("CATALOG_LOCKED", `${what} refused: ${who} holds the writer lock ${catalogPath}.lock (svc serve is running); stop it first`, {
        cause: e,
        details: e.details,
      });
    }
    throw e;
  }
}
