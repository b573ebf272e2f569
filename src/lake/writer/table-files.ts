/**
 * Parquet files of one table from spool-format CSV files (docs/ARCHITECTURE.md "Write path"): one
 * file per partition value, each reserved in the catalog (newDataFilePath) and written durably by
 * writeDataFile. Shared by the flush of a table's spool (writer.ts) and by the group commit of
 * several tables' rows in one catalog transaction (group-commit.ts).
 */
import type { TableDef } from "../../core/index.ts";
import type { LakeCatalog, NewDataFile, TableInfo } from "../catalog-port.ts";
import type { Engine } from "../engine.ts";
import { ident, literal } from "../sql.ts";
import { writeDataFile } from "./data-file.ts";
import { joinable, joinSeals } from "./join-seals.ts";
import { singleDate } from "./spool-rules.ts";
import { spoolSelect } from "./spool-sql.ts";
import type { SpoolEntry } from "./types.ts";

export interface TableFilesTarget {
  engine: Engine;
  catalog: LakeCatalog;
  dataPath: string;
  rowGroupRows: number;
  /** Wraps a catalog call so its failure counts as the catalog's (flush-retry.ts CATALOG_FAILED). */
  fromCatalog?<T>(what: string, call: () => Promise<T>): Promise<T>;
}

/**
 * Writes the rows of `entries` as Parquet files of the table; `into` receives each file as soon as
 * it is written, so the caller can remove them all when a later step fails.
 */
export async function writeTableFiles(
  t: TableFilesTarget,
  def: TableDef,
  info: TableInfo,
  entries: readonly SpoolEntry[],
  into: NewDataFile[],
): Promise<void> {
  const source = spoolSelect(def, entries).join(" UNION ALL ");
  const part = def.partitionBy;
  // The dates come from the spans CsvBatch kept; only a batch across midnight (or of unknown
  // span) needs the extra pass over the spool that asks DuckDB for them.
  const oneDay = part ? singleDate(def, entries) : undefined;
  // Parquet seals of one partition: joined as they are, no DuckDB pass over the rows.
  const join = (!part || oneDay !== undefined) && joinable(def, entries);
  const partValues: Array<string | null> = !part
    ? [null]
    : oneDay !== undefined
      ? [oneDay]
      : (await t.engine.readAll(`SELECT DISTINCT ${ident(part)}::VARCHAR AS v FROM (${source})`)).map((r) =>
          r.v === null || r.v === undefined ? null : String(r.v),
        );
  for (const pv of partValues) {
    const where =
      !part || oneDay !== undefined
        ? "true"
        : pv === null
          ? `${ident(part)} IS NULL`
          : `${ident(part)}::VARCHAR = ${literal(pv)}`;
    const partitionValue = part ? (pv ?? "__null") : undefined;
    into.push(
      await writeDataFile(
        (sql) => t.engine.run(sql),
        (sql) => t.engine.readAll(sql),
        join ? (abs) => joinSeals(def, info, entries, abs) : `SELECT * FROM (${source}) WHERE ${where}`,
        {
          def,
          info,
          dataPath: t.dataPath,
          relPath: await (t.fromCatalog
            ? t.fromCatalog("reserving a data file path", () => t.catalog.newDataFilePath(info.tableId, partitionValue))
            : t.catalog.newDataFilePath(info.tableId, partitionValue)),
          rowGroupRows: t.rowGroupRows,
          sorted: false,
          ...(partitionValue !== undefined ? { partitionValue } : {}),
        },
      ),
    );
  }
}
