/**
 * The lookup indexes warmed after start (docs/ARCHITECTURE.md "Lookups by page", warm-up): the
 * footers of the newest data files of every table with point-lookup columns are read into the
 * bloom index (bloom-index.ts) and the page layouts (page-index.ts) in the background, so the
 * first searches after a restart do not each pay for the files they meet first.
 */
import type { TableDef } from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, TableInfo } from "./catalog-port.ts";
import { type BloomIndex, LOOKUP_COLUMNS } from "./bloom-index.ts";
import type { PagedFiles } from "./page-index.ts";

/** Files per DuckDB statement reading footers for the bloom index. */
const BATCH = 16;

export interface WarmTarget {
  catalog: LakeCatalog;
  tables: () => Iterable<{ def: TableDef; info: TableInfo }>;
  bloom: BloomIndex;
  layouts: PagedFiles;
  /** Files warmed at most (the page layouts' bound: more would push out the first ones). */
  maxFiles: number;
  /** Told the files chosen, before any is read (the row fetch's worker warms its own layouts). */
  alsoWarm?: (paths: string[]) => void;
  /** True once the lake is stopping: the warm-up ends. */
  stopped: () => boolean;
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** Warms the indexes for the newest files first; resolves with the number of files read. */
export async function warmLookups(w: WarmTarget): Promise<number> {
  const files: { file: LiveDataFile; newest: string; columns: string[] }[] = [];
  for (const { def, info } of w.tables()) {
    const columns = def.columns.filter((c) => LOOKUP_COLUMNS.has(c.name)).map((c) => c.name);
    if (columns.length === 0) continue;
    // Every column's statistics, as a search lists them: the catalog keeps them in memory too.
    for (const file of await w.catalog.listDataFiles(info.tableId))
      files.push({ file, newest: file.columnStats[def.timeColumn]?.max ?? "", columns });
    if (w.stopped()) return 0;
  }
  files.sort((a, b) => (a.newest < b.newest ? 1 : a.newest > b.newest ? -1 : 0));
  const chosen = files.slice(0, w.maxFiles);
  w.alsoWarm?.(chosen.map((f) => f.file.absolutePath));
  let warmed = 0;
  for (let i = 0; i < chosen.length; i += BATCH) {
    const batch = chosen.slice(i, i + BATCH);
    const byColumns = new Map<string, string[]>();
    for (const f of batch) {
      const k = f.columns.join(",");
      const paths = byColumns.get(k);
      if (paths) paths.push(f.file.absolutePath);
      else byColumns.set(k, [f.file.absolutePath]);
    }
    for (const [k, paths] of byColumns) await w.bloom.warm(paths, k.split(","));
    for (const f of batch) {
      if (w.stopped()) return warmed;
      w.layouts.withFile(
        f.file.absolutePath,
        () => true,
        () => false,
      );
      warmed++;
      // One file's footer at a time: searches that arrive meanwhile wait for one file at most.
      await nextTurn();
    }
  }
  return warmed;
}
