/**
 * Start-up repair of duplicate catalog rows (`auto_repair_catalog`, default
 * true; docs/OPERATIONS.md "Automatic repair at start"). Duplicate snapshot, table, column, file or
 * stats rows (left by an interrupted foreign writer or a bad manual edit) make readers disagree
 * about the lake; of each duplicated row the most recently inserted one is kept. Lossless: before
 * the first change a backup `<catalog>.bak-<UTC time>` is taken, so every removed row is still in
 * it (the newest `backups_kept` backups are kept).
 */
import type { Logger } from "../../core/index.ts";
import type { Catalog } from "../catalog/index.ts";
import { removeStaleTemps } from "./catalog-files.ts";

export function autoRepairCatalog(
  catalog: Catalog,
  opts: { enabled: boolean; backupsKept: number; log: Logger },
): Record<string, number> {
  const duplicates = catalog.duplicateRows();
  const rows = Object.values(duplicates).reduce((a, b) => a + b, 0);
  if (rows === 0) return {};
  if (!opts.enabled) {
    opts.log.error(
      "the catalog has duplicate rows and auto_repair_catalog is off: readers may disagree about the lake",
      { catalog: catalog.path, duplicates, rows },
    );
    return {};
  }
  removeStaleTemps(catalog.path);
  const backup = catalog.backup();
  if (opts.backupsKept > 0) catalog.pruneBackups(opts.backupsKept);
  const { removed } = catalog.repair();
  const integrity = catalog.integrityCheck();
  opts.log.warn("repaired duplicate catalog rows at start (the most recent of each kept)", {
    catalog: catalog.path,
    removed,
    rows: Object.values(removed).reduce((a, b) => a + b, 0),
    backup,
    ...(integrity.ok ? {} : { remaining: integrity.problems }),
  });
  return removed;
}
