/**
 * Worker entry of the row fetch's second thread (page-helper.ts, docs/ARCHITECTURE.md "Row fetch
 * by page"): reads some columns of rows of local data files page by page, with its own open
 * descriptors and page layouts, while the main thread reads the others. Messages in:
 * `{id, path, columns, rows}` (answered `{id, rows}`, `rows` null when the file is not one read
 * by page), `{warm: paths}` (their layouts built one per turn, unanswered) and `{close: true}`
 * (its descriptors closed, answered `{closed: true}`; the host sends it before ending it). Built into the
 * executable as its own entry point (scripts/build.ts).
 */
import type { ColumnDef } from "../core/index.ts";
import { OpenFiles } from "./open-files.ts";
import { PagedFiles } from "./page-index.ts";
import { PageReader } from "./page-reader.ts";

declare const self: Worker;

// No cache of decompressed pages: this thread reads the wide columns, whose pages no later pass reads again.
const reader = new PageReader(new PagedFiles(undefined, 0, new OpenFiles()));
let warming: string[] = [];

function warmOne(): void {
  const path = warming.shift();
  if (path === undefined) return;
  reader.layouts.withFile(
    path,
    () => true,
    () => false,
  );
  setImmediate(warmOne);
}

self.onmessage = (e: MessageEvent) => {
  const m = e.data as
    | { close: true }
    | { warm: string[] }
    | { id: number; path: string; columns: ColumnDef[]; rows: number[] };
  if ("close" in m) {
    // Descriptors are the process's, not the thread's: they stay open past terminate() unless closed.
    warming = [];
    reader.layouts.openFiles.closeAll();
    self.postMessage({ closed: true });
    return;
  }
  if ("warm" in m) {
    const idle = warming.length === 0;
    warming = [...warming, ...m.warm].slice(-reader.layouts.maxFiles);
    if (idle) setImmediate(warmOne);
    return;
  }
  try {
    self.postMessage({ id: m.id, rows: reader.read(m.path, { columns: m.columns }, m.rows) ?? null });
  } catch (err) {
    self.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
};
