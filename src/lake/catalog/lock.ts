/**
 * Exclusive writer lock `<catalog>.lock` (docs/ARCHITECTURE.md "Durability: what a crash can lose": "Two writers on one catalog
 * are prevented by the exclusive lock file"). The file holds {pid, hostname, startedAt}. It is created
 * atomically with its content (written to a private temp file, then hard-linked to the lock name,
 * which fails with EEXIST like O_CREAT|O_EXCL), so a reader never sees a half-written lock.
 * A lock whose pid is dead on this host, or whose pid now belongs to a process started later
 * (pid reuse after a reboot), is stale and taken over with a warning.
 */
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { AppError, type Logger } from "../../core/index.ts";

export interface LockOwner {
  pid: number;
  hostname: string;
  /** ISO time the owning process started. */
  startedAt: string;
}

export interface CatalogLock {
  path: string;
  owner: LockOwner;
  release(): void;
}

const processStartedAt = () => new Date(Date.now() - process.uptime() * 1000).toISOString();

function readOwner(path: string): LockOwner | null | "missing" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw e;
  }
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.pid === "number" && typeof v.hostname === "string" && typeof v.startedAt === "string") {
      return { pid: v.pid, hostname: v.hostname, startedAt: v.startedAt };
    }
  } catch {
    // unparseable: treated as stale below (we never write partial content)
  }
  return null;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Linux: start time of `pid` from /proc (field 22 of stat, in clock ticks after boot). */
function linuxStartMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    const btime = /^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"));
    if (!btime || !Number.isFinite(ticks)) return null;
    // USER_HZ is 100 on every Linux ABI Bun supports.
    return Number(btime[1]) * 1000 + (ticks / 100) * 1000;
  } catch {
    return null;
  }
}

/** Why a lock is stale, or null when its owner may still be running. */
function staleReason(owner: LockOwner | null): string | null {
  if (owner === null) return "unreadable lock file";
  if (owner.hostname !== hostname()) return null;
  if (owner.pid === process.pid) return null;
  if (!pidAlive(owner.pid)) return `pid ${owner.pid} is not running`;
  const started = linuxStartMs(owner.pid);
  const claimed = Date.parse(owner.startedAt);
  // A process that started clearly after the lock owner did is a reused pid.
  if (started !== null && Number.isFinite(claimed) && started - claimed > 5000)
    return `pid ${owner.pid} was reused by a newer process`;
  return null;
}

const sameOwner = (a: LockOwner | null | "missing", b: LockOwner) =>
  a !== null && a !== "missing" && a.pid === b.pid && a.hostname === b.hostname && a.startedAt === b.startedAt;

export function acquireCatalogLock(catalogPath: string, log: Logger): CatalogLock {
  const path = `${catalogPath}.lock`;
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: processStartedAt() };
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, JSON.stringify(owner) + "\n", { flag: "wx" });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(tmp, path);
        return { path, owner, release: () => releaseLock(path, owner) };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const current = readOwner(path);
      if (current === "missing") continue;
      const reason = staleReason(current);
      if (reason === null) {
        const who =
          current === null
            ? "another process"
            : `pid ${current.pid} on ${current.hostname} (started ${current.startedAt})`;
        throw new AppError("CATALOG_LOCKED", `catalog ${catalogPath} is locked by ${who}: lock file ${path}`, {
          details: { lockFile: path, pid: current?.pid, hostname: current?.hostname },
        });
      }
      // Move the stale lock aside atomically, then make sure we moved the one we judged stale: a
      // competing process may have taken it over in between, in which case it goes back.
      const aside = `${path}.stale.${process.pid}`;
      try {
        renameSync(path, aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw e;
      }
      const moved = readOwner(aside);
      if (current !== null && !sameOwner(moved, current)) {
        try {
          linkSync(aside, path);
        } catch {
          // someone else holds the lock now; the loop reports it
        }
        unlinkSync(aside);
        continue;
      }
      unlinkSync(aside);
      log.warn("took over a stale catalog lock", { lockFile: path, reason, previous: current ?? undefined });
    }
    throw new AppError("CATALOG_LOCKED", `catalog ${catalogPath}: could not take the lock file ${path} (contended)`, {
      details: { lockFile: path },
    });
  } finally {
    unlinkSync(tmp);
  }
}

function releaseLock(path: string, owner: LockOwner): void {
  // Only remove the lock if it is still ours (an operator may have removed and re-taken it).
  if (!sameOwner(readOwner(path), owner)) return;
  try {
    unlinkSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}
