/**
 * A table's definition recovered from its Parquet files (catalog rebuild, docs/OPERATIONS.md): the
 * columns are the files' top-level columns by Parquet field id (= DuckLake column_id, which our
 * writer and the extension assign 1, 2, … and never reuse), the partition column comes from the
 * `<column>=<value>` directories. The newest file decides a column's name and type; a file that
 * disagrees cannot be placed in the table and is reported instead.
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

export function tableShape(files: ScannedFile[]): TableShape {
  const misfits: TableShape["misfits"] = [];
  // Partitioning: the one most files agree on.
  const votes = new Map<string, number>();
  for (const f of files) votes.set(f.file.partition?.column ?? "", (votes.get(f.file.partition?.column ?? "") ?? 0) + 1);
  const part = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
  let fitting = files.filter((f) => {
    if ((f.file.partition?.column ?? "") === part) return true;
    misfits.push({ file: f, reason: `partitioned by ${f.file.partition?.column ?? "nothing"}, the table's other files by ${part || "nothing"}` });
    return false;
  });
  // Columns: newest file first decides.
  const byId = new Map<number, ColumnDef>();
  const idOfName = new Map<string, number>();
  fitting = [...fitting].sort((a, b) => compareCreation(b.file, a.file));
  fitting = fitting.filter((f) => {
    for (const c of f.facts.columns) {
      const known = byId.get(c.fieldId);
      const otherId = idOfName.get(c.name);
      if ((known && (known.name !== c.name || known.type !== c.type)) || (otherId !== undefined && otherId !== c.fieldId)) {
        const was = known ? `${known.name} ${known.type}` : `field id ${otherId}`;
        misfits.push({ file: f, reason: `column field id ${c.fieldId} is ${c.name} ${c.type} here, ${was} in newer files` });
        return false;
      }
    }
    for (const c of f.facts.columns) {
      byId.set(c.fieldId, { name: c.name, type: c.type });
      idOfName.set(c.name, c.fieldId);
    }
    return true;
  });
  const ids = [...byId.keys()].sort((a, b) => a - b);
  const columns = ids.map((id) => byId.get(id)!);
  const shape: TableShape = { columns, ...(part ? { partitionBy: part } : {}), files: fitting.reverse(), misfits };
  if (ids.some((id, i) => id !== i + 1)) shape.refused = `Parquet field ids ${ids.join(",")} are not 1..${ids.length} (a dropped column?)`;
  else if (part && !byId.has(idOfName.get(part) ?? -1)) shape.refused = `partition column ${part} is not a column of the files`;
  return shape;
}
