/**
 * Data files kept open between the reads of the lookups and row fetches (docs/ARCHITECTURE.md
 * "Open data files"): a caller's search over a week opens each of about a hundred files three to
 * five times (bloom pruning, candidate row groups, the lookup match, the row fetch), and an open
 * and close cost more than the few small reads in between.
 *
 * Data files are immutable under their path (a DuckLake data file is never rewritten in place), so
 * a kept descriptor reads what a fresh one would. A file deleted since (compacted away, retention)
 * stays readable through it, as the scan plan that listed it expects, and its disk space comes
 * back when the descriptor is closed: after `idleMs` without use, or when more than `max` files
 * are open (the least recently used first).
 */
import { closeSync, openSync } from "node:fs";

export class OpenFiles {
  /** path → descriptor and its last use (ms), the least recently used first. */
  private readonly open = new Map<string, { fd: number; used: number }>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Files opened / answered from the kept descriptors (tests, bench/search/explain.ts). */
  readonly stats = { opened: 0, reused: 0 };

  constructor(
    /**
     * More than the files of a week's search (the 100 M-row benchmark's caller search lists about
     * 140 of one table): the least recently used go first, so a search over more files than this
     * reopened every one of them, each time.
     */
    readonly max = 512,
    readonly idleMs = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A descriptor of the file at `path` open for reading; throws as openSync does (a file gone: ENOENT). */
  fd(path: string): number {
    const t = this.now();
    const known = this.open.get(path);
    if (known) {
      this.open.delete(path);
      known.used = t;
      this.open.set(path, known);
      this.stats.reused++;
      return known.fd;
    }
    const fd = openSync(path, "r");
    this.stats.opened++;
    this.open.set(path, { fd, used: t });
    this.sweep(t);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(this.now()), this.idleMs);
      this.timer.unref?.();
    }
    return fd;
  }

  /**
   * Closes the descriptor of `path` if one is kept (a read through it failed: the next use opens
   * the file again).
   */
  drop(path: string): void {
    const known = this.open.get(path);
    if (!known) return;
    this.open.delete(path);
    closeQuietly(known.fd);
  }

  /** Descriptors kept now. */
  get size(): number {
    return this.open.size;
  }

  /** Closes every descriptor (the lake stopping). */
  closeAll(): void {
    for (const { fd } of this.open.values()) closeQuietly(fd);
    this.open.clear();
    this.stopTimer();
  }

  /** Closes descriptors idle for `idleMs` and those past `max`, the least recently used first. */
  private sweep(t: number): void {
    for (const [path, e] of this.open) {
      if (this.open.size <= this.max && t - e.used < this.idleMs) break;
      this.open.delete(path);
      closeQuietly(e.fd);
    }
    if (this.open.size === 0) this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed: nothing held
  }
}
