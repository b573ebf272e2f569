/**
 * The catalog's statistic texts (src/lake/catalog/values.ts) against DuckDB itself: min/max are
 * "encoded as a string" that readers cast back (DuckLake ducklake_file_column_stats), and the
 * extension stores DuckDB's CAST(x AS VARCHAR). Each value here is formatted by both and compared.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { formatStatValue } from "../../src/lake/catalog/index.ts";

let instance: DuckDBInstance;
let con: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  con = await instance.connect();
  await con.run("SET TimeZone = 'UTC'");
});

afterAll(() => {
  con.closeSync();
  instance.closeSync();
});

async function duck(sql: string): Promise<string> {
  const rows = (await con.runAndReadAll(`SELECT (${sql})::VARCHAR AS v`)).getRowObjects();
  return String(rows[0]?.v);
}

// biome-ignore lint/correctness/noPrecisionLoss: 123456789012345678 is rounded on purpose (the nearest double is what is formatted)
const rounded = 123456789012345678;
const doubles = [
  0.1,
  1.5,
  3,
  -2.5,
  1e-7,
  1e20,
  1e15,
  1e16,
  rounded,
  0.0001,
  0.00001,
  1.5e300,
  5e-324,
  Math.PI,
  -1 / 3,
  2 ** 53,
  100,
  0.5,
];
test.each(doubles)("double %p", async (x) => {
  expect(formatStatValue("float64", x)).toBe(await duck(`${x.toExponential()}::DOUBLE`));
});

const micros = [
  0n,
  1n,
  -1n,
  1_795_305_600_000_000n,
  1_795_305_600_123_456n,
  1_795_305_600_120_000n,
  1_795_305_600_500_000n,
  253_402_300_799_999_999n,
  -62_135_596_800_000_000n,
];
test.each(micros)("timestamp %p µs", async (us) => {
  expect(formatStatValue("timestamp", us)).toBe(await duck(`make_timestamp(${us})`));
  expect(formatStatValue("timestamptz", us)).toBe(await duck(`make_timestamp(${us})::TIMESTAMPTZ`));
});

test.each([0, 1, -1, 20_779, 2_932_896, -719_162])("date %p days", async (days) => {
  expect(formatStatValue("date", days)).toBe(await duck(`DATE '1970-01-01' + ${days}`));
});

test.each(["true", "false"])("boolean %s as the extension stores it", async (b) => {
  // DuckDB prints true/false; the extension stores the Parquet writer's 1/0 (both cast back alike).
  expect(await duck(`'${formatStatValue("boolean", b)}'::BOOLEAN`)).toBe(b);
});
