import { describe, expect, test } from "bun:test";
import { columnStatsFromParquet, parquetFooterSize } from "./parquet-stats.ts";
import {
  compareStatValues,
  formatDouble,
  formatStatValue,
  newDataFilePath,
  parseTimestampMicros,
  partitionDir,
} from "./values.ts";

describe("formatStatValue", () => {
  // Expected texts are what DuckDB's CAST(x AS VARCHAR) and the ducklake extension 1.5.5 store.
  test.each([
    ["boolean", true, "1"],
    ["boolean", "false", "0"],
    ["boolean", "1", "1"],
    ["int64", 42, "42"],
    ["int64", "-0007", "-7"],
    ["int64", 9007199254740993n, "9007199254740993"],
    ["int32", "2", "2"],
    ["float64", 3, "3.0"],
    ["float64", -2.5, "-2.5"],
    ["float64", 0.1, "0.1"],
    ["float64", 1e-7, "1e-07"],
    ["float64", 1e20, "1e+20"],
    ["float64", 1e15, "1000000000000000.0"],
    ["float64", 1e16, "1e+16"],
    // biome-ignore lint/correctness/noPrecisionLoss: the literal is rounded on purpose (the nearest double is what is formatted)
    ["float64", 123456789012345678, "1.2345678901234568e+17"],
    ["float64", 0.0001, "0.0001"],
    ["float64", 0.00001, "1e-05"],
    ["float64", "1.5e300", "1.5e+300"],
    ["float64", "inf", "inf"],
    ["float64", -Infinity, "-inf"],
    ["float64", NaN, null],
    ["float64", "nan", null],
    ["varchar", "a b", "a b"],
    ["uuid", "8A7C0000-0000-7000-8000-000000000000", "8a7c0000-0000-7000-8000-000000000000"],
    ["date", "2026-11-22", "2026-11-22"],
    ["date", 0, "1970-01-01"],
    ["date", new Date("2026-11-22T23:59:59Z"), "2026-11-22"],
    ["date", "0099-01-01", "0099-01-01"],
    ["timestamp", "2026-11-22 10:00:00", "2026-11-22 10:00:00"],
    ["timestamp", "2026-11-22T10:00:00.120000", "2026-11-22 10:00:00.12"],
    ["timestamp", "2026-11-22 10:00:00.000001", "2026-11-22 10:00:00.000001"],
    ["timestamp", 1_795_305_600_000_000n, "2026-11-22 00:00:00"],
    ["timestamp", 1_795_305_600_123_456, "2026-11-22 00:00:00.123456"],
    ["timestamp", new Date("2026-11-22T00:00:00.5Z"), "2026-11-22 00:00:00.5"],
    ["timestamp", -1n, "1969-12-31 23:59:59.999999"],
    ["timestamp", "2026-11-22 10:00:00.123456789", "2026-11-22 10:00:00.123456"],
    ["timestamptz", "2026-11-22 10:00:00.5+00", "2026-11-22 10:00:00.5+00"],
    ["timestamptz", "2026-11-22 11:30:00+01:30", "2026-11-22 10:00:00+00"],
    ["timestamptz", "2026-11-22T10:00:00Z", "2026-11-22 10:00:00+00"],
    ["timestamptz", null, null],
  ] as const)("%s %p → %p", (type, value, expected) => {
    expect(formatStatValue(type, value)).toBe(expected);
  });

  test.each([
    ["int64", "1.5"],
    ["int64", "x"],
    ["int64", 1.5],
    ["float64", "abc"],
    ["timestamp", "yesterday"],
    ["date", "22/11/2026"],
    ["boolean", "yes"],
    ["varchar", true],
  ] as const)("%s %p is refused", (type, value) => {
    expect(() => formatStatValue(type, value)).toThrow();
  });
});

describe("compareStatValues", () => {
  test.each([
    ["int64", "9", "10", -1],
    ["int64", "-1", "-10", 1],
    ["float64", "1e-07", "0.0001", -1],
    ["float64", "inf", "1e+300", 1],
    ["timestamp", "2026-11-22 10:00:00", "2026-11-22 10:00:00.5", -1],
    ["timestamp", "2026-11-22 10:00:00.5", "2026-11-22 10:00:00.5", 0],
    ["timestamptz", "2026-11-22 10:00:00+00", "2026-11-22 10:30:00+01", 1],
    ["date", "2026-11-22", "2026-11-03", 1],
    ["varchar", "Z", "a", -1],
    ["varchar", "\uffff", "\u{1F600}", -1], // UTF-8 byte order, not UTF-16 code units
    ["boolean", "0", "1", -1],
  ] as const)("%s %s vs %s", (type, a, b, sign) => {
    expect(Math.sign(compareStatValues(type, a, b))).toBe(sign);
  });
});

test("compareStatValues orders DuckDB's timestamp texts as their values", () => {
  // The text fast path against the parse, over bounds as DuckDB and formatStatValue write them:
  // fractions of 0-6 digits, trailing zeros or not, equal values in different forms.
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const text = (us: number) => {
    const iso = new Date(Math.floor(us / 1000)).toISOString().replace("T", " ").slice(0, 19);
    const frac = String(us % 1_000_000).padStart(6, "0");
    const keep = rand(7); // digits written, at least those that are not trailing zeros
    const digits = frac.replace(/0+$/, "").length;
    const n = Math.max(keep, digits);
    return n === 0 ? iso : `${iso}.${frac.slice(0, n)}`;
  };
  const base = Date.UTC(2026, 10, 22) * 1000;
  for (let i = 0; i < 2000; i++) {
    const a = base + rand(5) * 1_000_000 + [0, 500_000, 120_000, 1, 999_999][rand(5)]!;
    const b = rand(3) === 0 ? a : base + rand(5) * 1_000_000 + rand(1_000_000);
    const [x, y] = [text(a), text(b)];
    const want = Math.sign(Number(parseTimestampMicros(x)! - parseTimestampMicros(y)!));
    expect([x, y, Math.sign(compareStatValues("timestamp", x, y))]).toEqual([x, y, want]);
  }
  expect(compareStatValues("timestamp", "2026-11-22 10:00:00", "2026-11-22 10:00:00.000000")).toBe(0);
  expect(compareStatValues("timestamp", "2026-11-22 10:00:00.1", "2026-11-22 10:00:00.100")).toBe(0);
  expect(compareStatValues("date", "2026-11-22", "2026-11-22 00:00:00")).toBe(0);
});

test("formatDouble round-trips", () => {
  for (const x of [Math.PI, -Math.E, 1 / 3, 2 ** 60, 5e-324, 1.7976931348623157e308, 0.5, 100, 12345.678]) {
    expect(Number(formatDouble(x))).toBe(x);
  }
});

test("parseTimestampMicros accepts DuckDB output and refuses junk", () => {
  expect(parseTimestampMicros("1970-01-01 00:00:01")).toBe(1_000_000n);
  expect(parseTimestampMicros("1970-01-01 01:00:00+01")).toBe(0n);
  expect(parseTimestampMicros("1970-01-01")).toBe(0n);
  expect(parseTimestampMicros("nope")).toBeNull();
});

test("partition directories and data file names follow the extension's layout", () => {
  expect(partitionDir("date", "2026-11-22")).toBe("date=2026-11-22/");
  expect(partitionDir("p", "a b/c=d")).toBe("p=a%20b%2Fc%3Dd/");
  expect(newDataFilePath({ dataDir: "main/t/", partitionBy: "date" }, "2026-11-22")).toMatch(
    /^main\/t\/date=2026-11-22\/ducklake-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.parquet$/,
  );
  expect(newDataFilePath({ dataDir: "main/t/" })).toMatch(/^main\/t\/ducklake-[0-9a-f-]{36}\.parquet$/);
  expect(() => newDataFilePath({ dataDir: "main/t/", partitionBy: "date" })).toThrow();
});

describe("columnStatsFromParquet", () => {
  const table = {
    columns: [
      { columnId: 1, name: "ts", type: "timestamp", order: 1 },
      { columnId: 2, name: "ok", type: "boolean", order: 2 },
      { columnId: 3, name: "d", type: "float64", order: 3 },
      { columnId: 4, name: "n", type: "int64", order: 4 },
    ],
  };
  test("folds row groups like the extension fills file_column_stats", () => {
    const chunk = (
      path: string,
      min: string | null,
      max: string | null,
      nulls: number,
      values: number,
      size: number,
    ) => ({
      path_in_schema: path,
      stats_min_value: min,
      stats_max_value: max,
      stats_null_count: BigInt(nulls),
      num_values: BigInt(values),
      total_compressed_size: BigInt(size),
    });
    const stats = columnStatsFromParquet(
      table,
      [
        chunk("ts", "2026-11-22 10:00:00", "2026-11-22 11:00:00", 0, 2, 41),
        chunk("ts", "2026-11-22 09:00:00.5", "2026-11-22 10:30:00", 1, 3, 40),
        chunk("ok", "false", "true", 0, 2, 26),
        chunk("ok", "true", "true", 0, 3, 26),
        chunk("d", "-2.5", "1.5", 0, 2, 41),
        chunk("d", null, null, 3, 3, 20),
        chunk("n", "9", "9", 0, 2, 10),
        chunk("n", "10", "100", 0, 3, 10),
        chunk("dropped_column", "x", "y", 0, 5, 10),
      ],
      new Set(["d"]),
    );
    expect(stats).toEqual({
      ts: { min: "2026-11-22 09:00:00.5", max: "2026-11-22 11:00:00", nullCount: 1, valueCount: 4, sizeBytes: 81 },
      ok: { min: "0", max: "1", nullCount: 0, valueCount: 5, sizeBytes: 52 },
      d: { min: "-2.5", max: "1.5", nullCount: 3, valueCount: 2, sizeBytes: 61, containsNan: true },
      n: { min: "9", max: "100", nullCount: 0, valueCount: 5, sizeBytes: 20 },
    });
  });

  test("footer size comes from the file tail", () => {
    expect(parquetFooterSize(new Uint8Array([9, 9, 0xa5, 0x01, 0, 0, 0x50, 0x41, 0x52, 0x31]))).toBe(421);
    expect(() => parquetFooterSize(new Uint8Array(8))).toThrow();
  });
});
