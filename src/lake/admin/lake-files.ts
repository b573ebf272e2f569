/**
 * Finding the Parquet files under the data path and placing each in its table by the DuckLake path
 * layout (docs/DUCKLAKE.md "Paths and file layout"):
 *   <schema>/<table>/ducklake-<uuid v7>.parquet                 unpartitioned
 *   <schema>/<table>/<column>=<url-encoded value>/<file>.parquet   partitioned (identity, one column)
 * Schema and table directories carry the names for plain names ([A-Za-z0-9_]); other names are
 * stored under a uuid and cannot be recovered from the disk alone.
 */
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join, relative, sep } from "node:path";

/**
 * `<data_path>/_quarantine`: where the start sets aside unreferenced files it does not know to be
 * garbage (quarantine.ts; docs/OPERATIONS.md "Orphans at start and the quarantine"). No scan looks
 * inside; `_quarantine` is a reserved schema name (src/lake/names.ts), so no table lives there.
 */
export const QUARANTINE_DIR = "_quarantine";

/**
 * Every entry below `dataPath` except the quarantine folder, depth first in name order. Symbolic
 * links are reported to `onLink` and never followed (a link can lead out of the data path or round
 * in a loop), so the walk ends on any tree; `lstat` alone decides what an entry is.
 */
export function walkLake(
  dataPath: string,
  onFile: (abs: string, name: string, st: Stats) => void,
  onLink: (abs: string) => void = () => {},
): void {
  const walk = (dir: string, top: boolean) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (top && name === QUARANTINE_DIR) continue;
      const abs = join(dir, name);
      let st: Stats;
      try {
        st = lstatSync(abs);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) onLink(abs);
      else if (st.isDirectory()) walk(abs, false);
      else if (st.isFile()) onFile(abs, name, st);
    }
  };
  walk(dataPath, true);
}

/** `abs` relative to `dataPath`, `/`-separated. */
export const relativeToData = (dataPath: string, abs: string) => relative(dataPath, abs).split(sep).join("/");

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
  /** Named as the writer names its files (`ducklake-<uuid v7>.parquet`). */
  writerNamed: boolean;
}

export interface UnplacedFile {
  abs: string;
  rel: string;
  reason: string;
}

const PLAIN = /^[A-Za-z0-9_]+$/;
const UUID7_NAME = /^ducklake-([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12})\.parquet$/;

/**
 * Every `*.parquet` below `dataPath` (symbolic links reported in `links`, never followed; the
 * quarantine folder skipped), placed or with the reason it cannot be.
 */
export function scanLakeFiles(dataPath: string): { placed: PlacedFile[]; unplaced: UnplacedFile[]; links: string[] } {
  const placed: PlacedFile[] = [];
  const unplaced: UnplacedFile[] = [];
  const links: string[] = [];
  walkLake(
    dataPath,
    (abs, name, st) => {
      if (!name.endsWith(".parquet")) return;
      const rel = relativeToData(dataPath, abs);
      const p = place(rel, name, st.mtimeMs);
      if (typeof p === "string") unplaced.push({ abs, rel, reason: p });
      else placed.push({ abs, rel, ...p });
    },
    (abs) => links.push(abs),
  );
  return { placed, unplaced, links };
}

function place(rel: string, name: string, mtimeMs: number): Omit<PlacedFile, "abs" | "rel"> | string {
  const parts = rel.split("/");
  if (parts.length !== 3 && parts.length !== 4) return "not at <schema>/<table>/[<column>=<value>/]<file>.parquet";
  const [schema = "", table = ""] = parts;
  if (!PLAIN.test(schema) || !PLAIN.test(table))
    return "schema or table directory is not a plain name (such tables are stored under a uuid; the name is not on disk)";
  const uuid = UUID7_NAME.exec(name)?.[1];
  // uuid v7 (RFC 9562): the first 48 bits are the Unix time in ms, then a counter and random bits.
  const createdMs = uuid !== undefined ? parseInt(uuid.slice(0, 8) + uuid.slice(9, 13), 16) : Math.floor(mtimeMs);
  const order = { createdMs, orderKey: uuid ?? name, writerNamed: uuid !== undefined };
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
export const compareCreation = (a: PlacedFile, b: PlacedFile) =>
  a.createdMs - b.createdMs || (a.orderKey < b.orderKey ? -1 : a.orderKey > b.orderKey ? 1 : 0);

/** A name the writer gives its files (what `svc serve` treats as its own). */
export const isWriterFileName = (name: string) => name.startsWith("ducklake-") && name.endsWith(".parquet");

/** Every regular `ducklake-*.parquet` below `dir` (links not followed, the quarantine skipped). */
export function writerFiles(dir: string): string[] {
  const out: string[] = [];
  walkLake(dir, (abs, name) => {
    if (isWriterFileName(name)) out.push(abs);
  });
  return out;
}
