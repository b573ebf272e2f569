/**
 * Worker entry of src/core/parquet/repage.ts: a merged file is cut into pages off the main thread
 * (zstd over every PLAIN chunk, 2-5 s of CPU for a 64 MB file), so searches and the ingest
 * hand-over never wait behind it. One message in ({input, output, rowsPerPage, minPageBytes, bloomColumns}), one
 * answer out ({stats} or {error}); the host ends the worker after it. Built into the executable as
 * its own entry point (scripts/build.ts).
 */
import { repageParquet } from "./repage.ts";

declare const self: Worker;

self.onmessage = async (e: MessageEvent) => {
  const m = e.data as {
    input: string;
    output: string;
    rowsPerPage: number;
    minPageBytes?: number;
    bloomColumns: string[];
  };
  try {
    const stats = await repageParquet(m.input, m.output, {
      rowsPerPage: m.rowsPerPage,
      ...(m.minPageBytes !== undefined ? { minPageBytes: m.minPageBytes } : {}),
      bloomColumns: new Set(m.bloomColumns),
    });
    self.postMessage({ stats });
  } catch (err) {
    self.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
};
