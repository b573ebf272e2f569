/**
 * Worker entry of the row fetch's second thread (page-helper.ts, docs/ARCHITECTURE.md "Row fetch
 * by page"): reads some columns of rows of local data files page by page, with its own open
 * descriptors and page layouts, while the main thread reads the others, and matches a lookup's
 * older files while the main thread matches the newer ones ("Lookups by page"). Messages in:
 * `{id, path, columns, rows}` (answered `{id, rows}`, `rows` null when the file is not one read
 * by page), `{id, match: {files, lookups, limit}}` (answered `{id, match}`, a page-match.ts
 * MatchResult per file), `{advise: {files, lookups}}` (what matching those files reads
 * advised to the kernel, unanswered), `{warm: paths}` (their layouts built one per turn,
 * unanswered) and `{close: true}`
 * (its descriptors closed, answered `{closed: true}`; the host sends it before ending it). Built into the
 * executable as its own entry point (scripts/build.ts).
 */
import type { ColumnDef } from "../core/index.ts";
import type { Lookup } from "./bloom-index.ts";
import { OpenFiles } from "./open-files.ts";
import { PagedFiles } from "./page-index.ts";
import { PageMatcher } from "./page-match.ts";
import { PageReader } from "./page-reader.ts";

declare const self: Worker;

// No cache of decompressed pages: this thread reads the wide columns, whose pages no later pass reads again.
const reader = new PageReader(new PagedFiles(undefined, 0, new OpenFiles()));
const matcher = new PageMatcher(reader.layouts);
let warming: string[] = [];

type Advice = { files: Array<{ path: string; groups: number[] }>; lookups: Lookup[] };
type Match = { files: Array<{ path: string; groups: number[] }>; lookups: Lookup[]; limit: number };

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
    | { advise: Advice }
    | { id: number; match: Match }
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
  if ("advise" in m) {
    const { files, lookups } = m.advise;
    for (const f of files) matcher.advise(f.path, lookups, f.groups);
    for (const f of files) matcher.adviseData(f.path, lookups, f.groups);
    return;
  }
  try {
    if ("match" in m) {
      const { files, lookups, limit } = m.match;
      self.postMessage({ id: m.id, match: files.map((f) => matcher.match(f.path, lookups, f.groups, limit)) });
      return;
    }
    self.postMessage({ id: m.id, rows: reader.read(m.path, { columns: m.columns }, m.rows) ?? null });
  } catch (err) {
    self.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
};
