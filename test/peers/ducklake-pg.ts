/**
 * Helpers of the PostgreSQL DuckLake catalog tests: the stock DuckDB with the ducklake and postgres
 * extensions (test/peers/ducklake_pg.py in the Python venv of scripts/python-peers.sh), and Parquet
 * files written as the lake writer writes them, described from their own metadata.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { closeSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  columnStatsFromParquet,
  type NewDataFile,
  newDataFilePath,
  type ParquetChunkStats,
  parquetFooterSize,
  type TableInfo,
} from "../../src/lake/catalog/index.ts";
import { PEERS, type Peer, pyPeersPython } from "../harness.ts";
import { postgresPeer } from "./postgres.ts";

export const DUCKLAKE_PG_SCRIPT = resolve(import.meta.dir, "ducklake_pg.py");

export const pyPostgresExt: Peer = {
  install: "run scripts/python-peers.sh (pip: duckdb-extension-postgres==1.5.5)",
  probe: () => {
    try {
      return (
        Bun.spawnSync([pyPeersPython(), "-c", "import duckdb_extension_postgres"], {
          stdout: "ignore",
          stderr: "ignore",
        }).exitCode === 0
      );
    } catch {
      return false;
    }
  },
};

/** PostgreSQL, and the stock DuckDB with both extensions. */
export const DUCKLAKE_PG_PEERS = [postgresPeer, PEERS.pyDuckLake, pyPostgresExt];

/** Runs ducklake_pg.py and parses its JSON answer. */
export function duckLakePg<T>(args: string[]): T {
  const r = Bun.spawnSync([pyPeersPython(), DUCKLAKE_PG_SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`ducklake_pg.py ${args[0]} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as T;
}

export interface ReadResult {
  count: number;
  rows: Array<Record<string, unknown>>;
}

export const sqlStr = (s: string) => `'${s.replaceAll("'", "''")}'`;

export async function rowsOf(con: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await con.runAndReadAll(sql)).getRowObjects() as Array<Record<string, unknown>>;
}

/**
 * Writes `select` as the lake writer does (zstd, field id = column_id) at `path` (default a fresh
 * one of the table) and describes it from its own metadata.
 */
export async function writeParquet(
  con: DuckDBConnection,
  dataPath: string,
  t: TableInfo,
  partition: string | undefined,
  select: string,
  path = newDataFilePath(t, partition),
): Promise<NewDataFile> {
  const abs = join(dataPath, path);
  mkdirSync(dirname(abs), { recursive: true });
  const fieldIds = t.columns.map((c) => `${sqlStr(c.name)}: ${c.columnId}`).join(", ");
  await con.run(`COPY (${select}) TO ${sqlStr(abs)} (FORMAT parquet, COMPRESSION zstd, FIELD_IDS {${fieldIds}})`);
  const chunks = (await rowsOf(
    con,
    `SELECT path_in_schema, stats_min_value, stats_max_value, stats_null_count, num_values, total_compressed_size FROM parquet_metadata(${sqlStr(abs)})`,
  )) as unknown as ParquetChunkStats[];
  const count = await rowsOf(con, `SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlStr(abs)})`);
  const size = statSync(abs).size;
  const tail = new Uint8Array(8);
  const fd = openSync(abs, "r");
  readSync(fd, tail, 0, 8, size - 8);
  closeSync(fd);
  return {
    path,
    recordCount: Number(count[0]?.n),
    fileSizeBytes: size,
    footerSize: parquetFooterSize(tail),
    columnStats: columnStatsFromParquet(t, chunks, new Set()),
    ...(partition !== undefined && t.partitionBy !== undefined
      ? { partitionValues: { [t.partitionBy]: partition } }
      : {}),
  };
}
