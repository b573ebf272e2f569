/**
 * The host side of src/core/parquet/repage-worker.ts (docs/STORAGE.md "Paged data files").
 */
import { repageParquet, type RepageOptions, type RepageStats } from "./repage.ts";

/**
 * repageParquet in a Worker started from `entry` (src/core/parquet/repage-worker.ts, resolved by
 * the caller so the executable finds its bundled copy). A worker that cannot start, or dies
 * without an answer, leaves the work to this thread (yielding after each row group); an error
 * the rewrite itself raises is thrown.
 */
export async function repageInWorker(
  entry: URL,
  input: string,
  output: string,
  opts: Omit<RepageOptions, "yieldEvery">,
  /** Told why the worker gave no answer, before the work is done on this thread. */
  onFallback: (reason: string) => void = () => {},
): Promise<RepageStats> {
  type Answer = { stats: RepageStats } | { error: string } | { died: string };
  const answer = await new Promise<Answer>((resolve) => {
    let w: Worker;
    try {
      w = new Worker(entry.href);
    } catch (e) {
      resolve({ died: e instanceof Error ? e.message : String(e) });
      return;
    }
    w.onmessage = (e: MessageEvent) => {
      resolve(e.data as Answer);
      w.terminate();
    };
    w.onerror = (e: ErrorEvent) => {
      resolve({ died: e.message });
      w.terminate();
    };
    w.postMessage({
      input,
      output,
      rowsPerPage: opts.rowsPerPage,
      minPageBytes: opts.minPageBytes,
      bloomColumns: [...(opts.bloomColumns ?? [])],
    });
  });
  if ("stats" in answer) return answer.stats;
  if ("error" in answer) throw new Error(answer.error);
  onFallback(answer.died);
  return await repageParquet(input, output, { ...opts, yieldEvery: () => new Promise((r) => setImmediate(r)) });
}
