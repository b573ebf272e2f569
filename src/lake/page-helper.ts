/**
 * The host side of page-worker.ts: a second thread for a search's row fetch (docs/ARCHITECTURE.md
 * "Row fetch by page"). The fetch's time is mostly zstd over one page of every column per call,
 * and a SIP table's payload and data_extra pages are most of those bytes: the worker reads the
 * widest columns of the rows while the main thread reads the rest (`splitColumns`), so on an
 * otherwise idle core the fetch takes about half as long. A worker that cannot start or dies
 * leaves every read to the main thread from then on.
 */
import type { ColumnDef } from "../core/index.ts";
import type { Lookup } from "./bloom-index.ts";
import type { Chunk, FileIndex } from "./page-index.ts";
import type { MatchResult } from "./page-match.ts";

type Rows = Record<string, unknown>[];

/** What a read through the worker gives: the rows, undefined (not a file read by page), or "failed" (read it here). */
export type HelperAnswer = Rows | undefined | "failed";

/** A worker's answer as it comes: rows of a read (null: not read by page), a match's result, or an error. */
interface Answer {
  id: number;
  rows?: Rows | null;
  match?: MatchResult[];
  error?: string;
}

export class PageHelper {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (a: Answer | "failed") => void>();
  private next = 0;
  /** Why the worker is gone (it failed to start, or died); undefined while it runs. */
  failure: string | undefined;

  constructor(entry: URL, onFailure: (reason: string) => void) {
    try {
      const w = new Worker(entry.href);
      // Bun's Worker can be unreferenced: an idle helper never keeps the process alive.
      (w as Worker & { unref?: () => void }).unref?.();
      w.onmessage = (e: MessageEvent) => {
        const m = e.data as Answer & { closed?: true };
        if (m.closed) {
          this.closed?.();
          return;
        }
        const done = this.pending.get(m.id);
        this.pending.delete(m.id);
        done?.(m.error !== undefined ? "failed" : m);
      };
      w.onerror = (e: ErrorEvent) => {
        this.fail(e.message || "the worker failed");
        onFailure(this.failure!);
      };
      this.worker = w;
    } catch (e) {
      this.failure = e instanceof Error ? e.message : String(e);
      onFailure(this.failure);
    }
  }

  get alive(): boolean {
    return this.worker !== undefined;
  }

  /** `columns` of rows `rows` of the data file at `path`, read by the worker. */
  async read(path: string, columns: readonly ColumnDef[], rows: readonly number[]): Promise<HelperAnswer> {
    const a = await this.ask({ path, columns: columns.map((c) => ({ name: c.name, type: c.type })), rows: [...rows] });
    return a === "failed" ? a : (a.rows ?? undefined);
  }

  /**
   * For each data file, the rows matching every lookup in its row groups `groups` (page-match.ts
   * `match`, at most `limit` rows a file), found by the worker in one message; "failed" when it
   * could not (match them here).
   */
  async matchMany(
    files: ReadonlyArray<{ path: string; groups: readonly number[] }>,
    lookups: readonly Lookup[],
    limit: number,
  ): Promise<MatchResult[] | "failed"> {
    const a = await this.ask({
      match: { files: files.map((f) => ({ path: f.path, groups: [...f.groups] })), lookups, limit },
    });
    return a === "failed" || a.match === undefined || a.match.length !== files.length ? "failed" : a.match;
  }

  /**
   * Has the worker advise the kernel of what matching these files will read (page-match.ts
   * `advise`, then `adviseData`), off this thread; unanswered.
   */
  adviseMatch(files: ReadonlyArray<{ path: string; groups: readonly number[] }>, lookups: readonly Lookup[]): void {
    this.worker?.postMessage({
      advise: { files: files.map((f) => ({ path: f.path, groups: [...f.groups] })), lookups },
    });
  }

  private ask(message: object): Promise<Answer | "failed"> {
    const w = this.worker;
    if (!w) return Promise.resolve("failed");
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      w.postMessage({ id, ...message });
    });
  }

  /** Builds the worker's layouts of these files in the background (the lake's warm-up). */
  warm(paths: readonly string[]): void {
    this.worker?.postMessage({ warm: [...paths] });
  }

  private closed: (() => void) | undefined;

  /** Ends the worker once it has closed its descriptors (at most `waitMs` later). */
  async stop(waitMs = 1000): Promise<void> {
    const w = this.worker;
    if (w) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.closed = resolve;
        timer = setTimeout(resolve, waitMs);
        w.postMessage({ close: true });
      });
      clearTimeout(timer);
    }
    this.fail("stopped");
  }

  private fail(reason: string): void {
    this.failure ??= reason;
    this.worker?.terminate();
    this.worker = undefined;
    for (const done of this.pending.values()) done("failed");
    this.pending.clear();
  }
}

/**
 * A page's fixed cost in the row fetch (one pread, its header, one zstd call), in bytes
 * decompressed for the same time: about 25 µs against zstd's 0.8 GB/s on the benchmark guest
 * (docs/BENCHMARKS.md "A second thread for the row fetch").
 */
const PAGE_COST_BYTES = 20_000;

/**
 * The columns the worker reads. A row costs one page of each column: its fixed cost plus its
 * bytes (the first row group's chunk over its page count, `pageCount`). The costliest columns
 * are taken while they hold less than half of the cost, so each thread does about half; none
 * when there is one column.
 */
export function splitColumns(
  columns: readonly ColumnDef[],
  index: FileIndex,
  pageCount: (chunk: Chunk) => number,
): Set<string> {
  const cost = new Map<string, number>();
  const first = index.groups[0];
  for (const c of columns) {
    const chunk = first?.get(c.name);
    cost.set(c.name, chunk ? PAGE_COST_BYTES + chunk.rawBytes / Math.max(1, pageCount(chunk)) : 0);
  }
  const total = columns.reduce((a, c) => a + cost.get(c.name)!, 0);
  const out = new Set<string>();
  if (columns.length < 2 || total === 0) return out;
  let taken = 0;
  for (const c of [...columns].sort((a, b) => cost.get(b.name)! - cost.get(a.name)!)) {
    const b = cost.get(c.name)!;
    if (taken + b / 2 > total / 2 || out.size === columns.length - 1) break;
    out.add(c.name);
    taken += b;
  }
  return out;
}
