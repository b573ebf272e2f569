/**
 * Which on-disk files are superseded copies of rows held by a newer file, for the catalog rebuild
 * (docs/OPERATIONS.md "Rebuilding the catalog"). Compaction writes a merged file and retires its
 * sources, which stay on disk until snapshot expiry (snapshot_retention_sec): registering both as
 * live would show those rows twice. A file is superseded when a newer file of the same table and
 * partition holds every one of its rows. The footer statistics rule out most pairs (row count,
 * every column's [min, max] and NULL count must fit); the rest are compared by content in DuckDB:
 * by the `uuid` column when the table has one (each row's own UUIDv7), else by a hash of each row.
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { compareStatValues } from "../catalog/index.ts";
import { loadDuckDb } from "../duckdb.ts";
import { ident, literal } from "../sql.ts";
import { compareCreation, type PlacedFile } from "./lake-files.ts";
import type { ParquetFacts } from "./parquet-footer.ts";

export interface ScannedFile {
  file: PlacedFile;
  facts: ParquetFacts;
}

/** A DuckDB of its own (no extensions loaded or installed) for the content checks. */
export class ContentChecker {
  private constructor(
    private readonly db: DuckDBInstance,
    private readonly con: DuckDBConnection,
  ) {}

  static async open(opts: { threads: number; memoryLimit: string; tempDirectory: string }): Promise<ContentChecker> {
    const db = await (await loadDuckDb()).DuckDBInstance.create(":memory:", {
      threads: String(opts.threads),
      memory_limit: opts.memoryLimit,
      temp_directory: opts.tempDirectory,
      autoinstall_known_extensions: "false",
      autoload_known_extensions: "false",
    });
    return new ContentChecker(db, await db.connect());
  }

  async rows(sql: string): Promise<Array<Record<string, unknown>>> {
    return (await this.con.runAndReadAll(sql)).getRowObjects() as Array<Record<string, unknown>>;
  }

  /** Column `n` of the first row. */
  async count(sql: string): Promise<number> {
    return Number((await this.rows(sql))[0]?.n ?? 0);
  }

  /** Rows of `a` not in `b` (0: `a` is contained), by uuid or by row hash over the shared columns. */
  async missingRows(a: ScannedFile, b: ScannedFile, uuidColumn: string | undefined): Promise<number> {
    const pa = `read_parquet(${literal(a.file.abs)})`;
    const pb = `read_parquet(${literal(b.file.abs)})`;
    if (uuidColumn !== undefined) {
      const u = ident(uuidColumn);
      return this.count(`SELECT count(*) AS n FROM ${pa} x ANTI JOIN ${pb} y ON x.${u} = y.${u}`);
    }
    const inB = new Set(b.facts.columns.map((c) => c.name));
    const cols = a.facts.columns.filter((c) => inB.has(c.name)).map((c) => ident(c.name));
    const h = `hash(${cols.join(", ")}) AS h`;
    return this.count(`SELECT count(*) AS n FROM (SELECT ${h} FROM ${pa} EXCEPT ALL SELECT ${h} FROM ${pb})`);
  }

  close(): void {
    this.con.closeSync();
    this.db.closeSync();
  }
}

/** Can `b` hold every row of `a`, judging by the footers alone? */
export function statsAllowContainment(a: ParquetFacts, b: ParquetFacts): boolean {
  if (a.recordCount === 0 || a.recordCount > b.recordCount) return false;
  const typeOf = new Map(b.columns.map((c) => [c.name, c.type]));
  const inA = new Set(a.columns.map((c) => c.name));
  for (const c of a.columns) {
    const s = a.columnStats[c.name];
    const t = b.columnStats[c.name];
    const type = typeOf.get(c.name);
    if (!s) continue;
    if (!t || type === undefined) {
      if (s.nullCount < a.recordCount) return false; // b lacks a column a has values in
      continue;
    }
    if (type !== c.type || s.nullCount > t.nullCount) return false;
    if (s.min !== null && (t.min === null || compareStatValues(type, t.min, s.min) > 0)) return false;
    if (s.max !== null && (t.max === null || compareStatValues(type, s.max, t.max) > 0)) return false;
  }
  // Columns only b has are NULL in a's rows.
  for (const c of b.columns)
    if (!inA.has(c.name) && (b.columnStats[c.name]?.nullCount ?? 0) < a.recordCount) return false;
  return true;
}

/**
 * Superseded files of one table: absolute path → the newer file holding all its rows. Files are
 * compared within their partition only, older against newer (a merge is always written after
 * its sources), and the first newer file that holds them wins.
 */
export async function findSuperseded(
  files: ScannedFile[],
  uuidColumn: string | undefined,
  checker: () => Promise<ContentChecker>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const byPartition = new Map<string, ScannedFile[]>();
  for (const f of files) {
    const k = f.file.partition ? `${f.file.partition.column}=${f.file.partition.value}` : "";
    byPartition.set(k, [...(byPartition.get(k) ?? []), f]);
  }
  for (const group of byPartition.values()) {
    group.sort((x, y) => compareCreation(x.file, y.file));
    for (let i = 0; i < group.length; i++) {
      const a = group[i]!;
      for (let j = i + 1; j < group.length; j++) {
        const b = group[j]!;
        if (!statsAllowContainment(a.facts, b.facts)) continue;
        const useUuid =
          uuidColumn !== undefined && b.facts.columns.some((c) => c.name === uuidColumn) ? uuidColumn : undefined;
        if ((await (await checker()).missingRows(a, b, useUuid)) === 0) {
          out.set(a.file.abs, b.file.abs);
          break;
        }
      }
    }
  }
  return out;
}
