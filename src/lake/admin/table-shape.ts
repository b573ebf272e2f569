/**
 * A table's definition recovered from its Parquet files (catalog rebuild, docs/OPERATIONS.md
 * "Rebuilding the catalog"): the columns are the files' top-level columns by Parquet field id (=
 * DuckLake column_id, which our writer and the extension assign 1, 2, … and never reuse), the
 * partition column comes from the `<column>=<value>` directories.
 *
 * Each file is judged on its own against the definition the table's files agree on, so one foreign
 * or damaged file beside the genuine ones is the file that is left out, never the genuine ones:
 *  - a file whose field ids are not 1..k is not a table file (our writer numbers every column);
 *  - the files named as the writer names its own (`ducklake-<uuid v7>.parquet`) decide the
 *    partitioning and, per field id, the column name and type by majority (the newer file on a
 *    tie); other files only vote when there is no such file;
 *  - every file that disagrees with that definition is reported instead of registered.
 */
import type { ColumnDef } from "../catalog/index.ts";
import { compareCreation } from "./lake-files.ts";
import type { ScannedFile } from "./superseded.ts";

export interface TableShape {
  columns: ColumnDef[];
  partitionBy?: string;
  files: ScannedFile[];
  /** Files of this directory that do not fit, with the reason. */
  misfits: Array<{ file: ScannedFile; reason: string }>;
  /** Set when no file of the table can be registered (the reason). */
  refused?: string;
}

const partitionOf = (f: ScannedFile) => f.file.partition?.column ?? "";

/** The most frequent key of `votes` (insertion order breaks ties: callers insert the preferred first). */
function majority<K>(votes: Map<K, number>): K | undefined {
  let best: K | undefined;
  let n = -1;
  for (const [k, c] of votes) {
    if (c > n) {
      best = k;
      n = c;
    }
  }
  return best;
}

export function tableShape(files: ScannedFile[]): TableShape {
  const misfits: TableShape["misfits"] = [];
  // Newest first: the order ties are broken in.
  let fitting = [...files].sort((a, b) => compareCreation(b.file, a.file));
  fitting = fitting.filter((f) => {
    const ids = f.facts.columns.map((c) => c.fieldId).sort((a, b) => a - b);
    if (ids.length > 0 && ids.every((id, i) => id === i + 1)) return true;
    misfits.push({
      file: f,
      reason: `Parquet field ids ${ids.join(",") || "(none)"} are not 1..${ids.length} (not a file of this table's writer, or a dropped column)`,
    });
    return false;
  });
  const voters = fitting.some((f) => f.file.writerNamed) ? fitting.filter((f) => f.file.writerNamed) : fitting;
  const partVotes = new Map<string, number>();
  for (const f of voters) partVotes.set(partitionOf(f), (partVotes.get(partitionOf(f)) ?? 0) + 1);
  const part = majority(partVotes) ?? "";
  const colVotes = new Map<number, Map<string, number>>();
  for (const f of voters) {
    if (partitionOf(f) !== part) continue;
    for (const c of f.facts.columns) {
      const v = colVotes.get(c.fieldId) ?? new Map<string, number>();
      const key = JSON.stringify([c.name, c.type]);
      v.set(key, (v.get(key) ?? 0) + 1);
      colVotes.set(c.fieldId, v);
    }
  }
  const byId = new Map<number, ColumnDef>();
  for (const [id, v] of colVotes) {
    const [name, type] = JSON.parse(majority(v)!) as [string, ColumnDef["type"]];
    byId.set(id, { name, type });
  }
  fitting = fitting.filter((f) => {
    if (partitionOf(f) !== part) {
      misfits.push({
        file: f,
        reason: `partitioned by ${partitionOf(f) || "nothing"}, the table's files by ${part || "nothing"}`,
      });
      return false;
    }
    for (const c of f.facts.columns) {
      const known = byId.get(c.fieldId);
      if (!known || known.name !== c.name || known.type !== c.type) {
        misfits.push({
          file: f,
          reason: `column field id ${c.fieldId} is ${c.name} ${c.type} here, ${known ? `${known.name} ${known.type}` : "absent"} in the table's files`,
        });
        return false;
      }
    }
    return true;
  });
  // Only ids some fitting file has (a column only misfits voted for is not the table's).
  const used = new Set(fitting.flatMap((f) => f.facts.columns.map((c) => c.fieldId)));
  const ids = [...used].sort((a, b) => a - b);
  const columns = ids.map((id) => byId.get(id)!);
  const shape: TableShape = { columns, ...(part ? { partitionBy: part } : {}), files: fitting.reverse(), misfits };
  const names = new Set(columns.map((c) => c.name));
  if (fitting.length === 0) shape.refused = "no file of the table fits its definition";
  else if (names.size !== columns.length) shape.refused = "two field ids carry the same column name";
  else if (part && !names.has(part)) shape.refused = `partition column ${part} is not a column of the files`;
  return shape;
}
