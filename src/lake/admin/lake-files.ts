/**
 * Finding the Parquet files under the data path and placing each in its table by the DuckLake path
 * layout (docs/DUCKLAKE.md "Paths and file layout"):
 *   <schema>/<table>/ducklake-<uuid v7>.parquet                 unpartitioned
 *   <schema>/<table>/<column>=<url-encoded value>/<file>.parquet   partitioned (identity, one column)
 * Schema and table directories carry the names for plain names ([A-Za-z0-9_]); other names are
 * stored under a uuid and cannot be recovered from the disk alone.
 */
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

export interface PlacedFile {
  /** Absolute path. */
  abs: string;
  /** Relative to the data path, `/`-separated. */
  rel: string;
  schema: string;
  table: string;
  /** Partition column and value from a `<column>=<value>` directory. */
  partition?: { column: string; value: string };
  /** Creation time (ms): from the uuid v7 in a `ducklake-<uuid>.parquet` name, else the modification time. */
  createdMs: number;
  /** Breaks ties of createdMs: the uuid v7 (its counter bits keep the order within a millisecond) or the name. */
  orderKey: string;
}

export interface UnplacedFile {
  abs: string;
  rel: string;
  reason: string;
}

const PLAIN = /^[A-Za-z0-9_]+$/;
const UUID7_NAME = /^ducklake-([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12})\.parquet$/;

/** Every `*.parquet` below `dataPath` (symlinks not followed), placed or with the reason it cannot be. */
export function scanLakeFiles(dataPath: string): { placed: PlacedFile[]; unplaced: UnplacedFile[] } {
  const placed: PlacedFile[] = [];
  const unplaced: UnplacedFile[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const abs = join(dir, name);
      const st = statSync(abs, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(abs);
      else if (st.isFile() && name.endsWith(".parquet")) {
        const rel = relative(dataPath, abs).split(sep).join("/");
        const p = place(rel, name, st.mtimeMs);
        if (typeof p === "string") unplaced.push({ abs, rel, reason: p });
        else placed.push({ abs, rel, ...p });
      }
    }
  };
  walk(dataPath);
  return { placed, unplaced };
}

function place(rel: string, name: string, mtimeMs: number): Omit<PlacedFile, "abs" | "rel"> | string {
  const parts = rel.split("/");
  if (parts.length !== 3 && parts.length !== 4) return "not at <schema>/<table>/[<column>=<value>/]<file>.parquet";
  const [schema = "", table = ""] = parts;
  if (!PLAIN.test(schema) || !PLAIN.test(table)) return "schema or table directory is not a plain name (such tables are stored under a uuid; the name is not on disk)";
  const uuid = UUID7_NAME.exec(name)?.[1];
  // uuid v7 (RFC 9562): the first 48 bits are the Unix time in ms, then a counter and random bits.
  const createdMs = uuid !== undefined ? parseInt(uuid.slice(0, 8) + uuid.slice(9, 13), 16) : Math.floor(mtimeMs);
  const order = { createdMs, orderKey: uuid ?? name };
  if (parts.length === 3) return { schema, table, ...order };
  const eq = parts[2]!.indexOf("=");
  if (eq <= 0) return "the directory between table and file is not <column>=<value>";
  try {
    const column = decodeURIComponent(parts[2]!.slice(0, eq));
    const value = decodeURIComponent(parts[2]!.slice(eq + 1));
    return { schema, table, partition: { column, value }, ...order };
  } catch {
    return "partition directory is not URL-encoded text";
  }
}

/** Older first: creation time, then the tie-breaker. */
export const compareCreation = (a: PlacedFile, b: PlacedFile) => a.createdMs - b.createdMs || (a.orderKey < b.orderKey ? -1 : a.orderKey > b.orderKey ? 1 : 0);

/** Every `ducklake-*.parquet` below `dir`: the names the writer gives its files (what `svc serve` treats as its own). */
export function writerFiles(dir: string): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...writerFiles(p));
    else if (st?.isFile() && name.startsWith("ducklake-") && name.endsWith(".parquet")) out.push(p);
  }
  return out;
}
