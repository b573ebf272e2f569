/**
 * Text encodings the DuckLake catalog stores (pure code): column statistics (ducklake_file_column_stats
 * and ducklake_table_column_stats min_value/max_value), snapshot times (ducklake_snapshot.snapshot_time)
 * and partition directory names. The spec stores min/max "encoded as a string" that readers cast to the
 * column type; we produce exactly the text DuckDB's CAST(x AS VARCHAR) gives, which is what the ducklake
 * extension writes (checked against extension 1.5.5, see docs/DUCKLAKE.md "Statistic texts"):
 *
 *   boolean      "0" / "1"                       int*         "-42"
 *   float*       shortest round-trip, Python-repr style: "1.5", "3.0", "1e-07", "1e+20", "inf"
 *   varchar/json the value itself                uuid         lower case "8-4-4-4-12"
 *   date         "2026-11-22"
 *   timestamp    "2026-11-22 10:00:00" or "2026-11-22 10:00:00.123456" (fraction without trailing zeros)
 *   timestamptz  the same in UTC followed by "+00"
 */
import { AppError } from "../../core/index.ts";
import type { LakeType, StatBound, TableInfo } from "./types.ts";
import { LAKE_TYPES } from "./types.ts";

export const isLakeType = (t: string): t is LakeType => (LAKE_TYPES as readonly string[]).includes(t);

const DUCKDB_TYPES: Record<LakeType, string> = {
  boolean: "BOOLEAN",
  int16: "SMALLINT",
  int32: "INTEGER",
  int64: "BIGINT",
  uint64: "UBIGINT",
  float32: "FLOAT",
  float64: "DOUBLE",
  varchar: "VARCHAR",
  json: "JSON",
  uuid: "UUID",
  date: "DATE",
  timestamp: "TIMESTAMP",
  timestamptz: "TIMESTAMPTZ",
};

/** DuckDB SQL type of a lake column type (for CREATE/CAST in the writer and query engine). */
export const duckdbType = (t: LakeType): string => DUCKDB_TYPES[t];

const isFloatType = (t: string) => t === "float32" || t === "float64";
const isIntType = (t: string) => /^u?int\d+$/.test(t);
const isTimestampType = (t: string) => t === "timestamp" || t === "timestamp_us" || t === "timestamptz";

/** DuckLake spec: contains_nan is only meaningful (non-NULL) for floating-point columns. */
export const typeHasNan = isFloatType;

const bad = (type: string, value: unknown, why: string) =>
  new AppError("VALIDATION", `cannot encode ${String(value)} as a ${type} statistic: ${why}`, {
    details: { type, value: String(value) },
  });

/** DuckDB's DOUBLE → VARCHAR: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function formatDouble(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return "0.0";
  const [mantissa = "", expText = "0"] = x.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  let text: string;
  if (exp >= 0) {
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    text = `${intPart}.${digits.slice(exp + 1) || "0"}`;
  } else {
    text = `0.${"0".repeat(-exp - 1)}${digits}`;
  }
  return negative ? `-${text}` : text;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
const US_PER_DAY = 86_400_000_000n;

/** Microseconds since the epoch → "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC clock, trailing zeros dropped). */
export function formatTimestampMicros(us: bigint, withZone = false): string {
  const days = us >= 0n ? us / US_PER_DAY : -((-us + US_PER_DAY - 1n) / US_PER_DAY);
  const inDay = us - days * US_PER_DAY;
  const date = formatDateDays(Number(days));
  const secs = Number(inDay / 1_000_000n);
  const frac = Number(inDay % 1_000_000n);
  const fracText = frac === 0 ? "" : `.${pad(frac, 6).replace(/0+$/, "")}`;
  return `${date} ${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}${fracText}${withZone ? "+00" : ""}`;
}

/** Days since the epoch → "YYYY-MM-DD". Years outside 0000-9999 are refused (DuckDB prints them differently). */
export function formatDateDays(days: number): string {
  const d = new Date(days * 86_400_000);
  const y = d.getUTCFullYear();
  if (!Number.isFinite(y) || y < 0 || y > 9999) throw bad("date", days, "year outside 0000-9999");
  return `${pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

const TS_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses the timestamp text forms DuckDB prints or accepts → microseconds since the epoch (UTC). */
export function parseTimestampMicros(text: string): bigint | null {
  const m = TS_RE.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms)) return null;
  // Date.UTC maps years 0-99 to 1900-1999; set the full year explicitly.
  const base = new Date(ms);
  base.setUTCFullYear(Number(y));
  let us = BigInt(base.getTime()) * 1000n + BigInt(frac.slice(0, 6).padEnd(6, "0") || "0");
  if (zone && zone !== "Z") {
    const sign = zone.startsWith("-") ? -1n : 1n;
    const digits = zone.slice(1).replace(":", "");
    const offsetMin = BigInt(Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0"));
    us -= sign * offsetMin * 60_000_000n;
  }
  return us;
}

function timestampMicros(type: string, v: StatBound): bigint {
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw bad(type, v, "invalid Date");
    return BigInt(v.getTime()) * 1000n;
  }
  if (typeof v === "bigint") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw bad(type, v, "not finite");
    return BigInt(Math.trunc(v));
  }
  const us = parseTimestampMicros(v);
  if (us === null) throw bad(type, v, "not a timestamp");
  return us;
}

function dateDays(v: StatBound): number {
  if (v instanceof Date) return Math.floor(v.getTime() / 86_400_000);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number") return Math.floor(v);
  const us = parseTimestampMicros(v);
  if (us === null) throw bad("date", v, "not a date");
  return Number(us / US_PER_DAY) - (us < 0n && us % US_PER_DAY !== 0n ? 1 : 0);
}

/**
 * Encodes a statistic or bound for a column of `type` in the catalog's text format (table above).
 * Accepts strings (as printed by DuckDB, e.g. parquet_metadata().stats_min_value, which are
 * normalised), numbers and bigints (for timestamps: microseconds since the epoch; for dates: days),
 * Dates and booleans. NaN gives null: NaN is recorded with `containsNan`, never as a bound.
 */
export function formatStatValue(type: string, v: StatBound | boolean | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  if (type === "boolean") {
    if (v === true || v === "true" || v === "1" || v === 1 || v === 1n) return "1";
    if (v === false || v === "false" || v === "0" || v === 0 || v === 0n) return "0";
    throw bad(type, v, "not a boolean");
  }
  if (typeof v === "boolean") throw bad(type, v, "boolean for a non-boolean column");
  if (isIntType(type)) {
    if (typeof v === "number" && !Number.isInteger(v)) throw bad(type, v, "not an integer");
    if (v instanceof Date) throw bad(type, v, "Date for an integer column");
    try {
      return BigInt(typeof v === "string" ? v.trim() : v).toString();
    } catch {
      throw bad(type, v, "not an integer");
    }
  }
  if (isFloatType(type)) {
    const x =
      typeof v === "string" ? parseFloatText(v) : typeof v === "bigint" ? Number(v) : v instanceof Date ? NaN : v;
    if (Number.isNaN(x)) {
      if (typeof v === "string" && v.trim().toLowerCase() === "nan") return null;
      if (typeof v === "number") return null;
      throw bad(type, v, "not a number");
    }
    return formatDouble(x);
  }
  if (type === "date") return formatDateDays(dateDays(v));
  if (isTimestampType(type)) return formatTimestampMicros(timestampMicros(type, v), type === "timestamptz");
  if (v instanceof Date) throw bad(type, v, "Date for a text column");
  if (type === "uuid") return String(v).toLowerCase();
  return String(v);
}

function parseFloatText(s: string): number {
  const t = s.trim().toLowerCase();
  if (t === "inf" || t === "infinity" || t === "+inf") return Infinity;
  if (t === "-inf" || t === "-infinity") return -Infinity;
  if (t === "" || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return NaN;
  return Number(t);
}

const utf8 = new TextEncoder();
const compareBigint = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Orders two statistic texts of a column type the way the typed values order (DuckDB casts before
 * comparing: "10" > "9" for integers). Strings compare by UTF-8 bytes, as DuckDB does.
 */
/** A timestamp or date statistic as DuckDB writes it: `YYYY-MM-DD[ HH:MM:SS[.f…]]`. */
const CANONICAL_TS = /^\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)?$/;
/** `…:SS.120` → `…:SS.12`, `…:SS.000` → `…:SS` (a canonical text; the same value). */
function trimFraction(t: string): string {
  if (t.length <= 19) return t;
  let end = t.length;
  while (t.charCodeAt(end - 1) === 48) end--; // '0'
  if (end === 20) end = 19; // only the '.' is left
  return end === t.length ? t : t.slice(0, end);
}

export function compareStatValues(type: string, a: string, b: string): number {
  if (isIntType(type)) {
    try {
      return compareBigint(BigInt(a), BigInt(b));
    } catch {
      // fall through to the generic rules for malformed text
    }
  }
  if (isFloatType(type) || /^decimal/.test(type)) {
    const x = parseFloatText(a);
    const y = parseFloatText(b);
    if (!Number.isNaN(x) && !Number.isNaN(y)) return x < y ? -1 : x > y ? 1 : 0;
  }
  if (isTimestampType(type) || type === "date" || /^timestamp/.test(type)) {
    // Two texts in DuckDB's own form (four-digit year, no zone, both with a time or both
    // without) order as their values once the fraction's trailing zeros are gone: its digits then
    // compare as a decimal fraction, and a missing one is the smallest. A listing compares every
    // file's bounds, where a parse costs several times more.
    if (CANONICAL_TS.test(a) && CANONICAL_TS.test(b) && a.length > 10 === b.length > 10) {
      const x = trimFraction(a);
      const y = trimFraction(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const x = parseTimestampMicros(a);
    const y = parseTimestampMicros(b);
    if (x !== null && y !== null) return compareBigint(x, y);
  }
  if (type === "boolean") return (formatStatValue(type, a) ?? "").localeCompare(formatStatValue(type, b) ?? "");
  return Buffer.compare(utf8.encode(a), utf8.encode(b));
}

/** `created_table:"schema"."table"` style identifier quoting (double quotes, embedded ones doubled). */
export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Default directory of a schema or table (DuckLake "Paths"): the name when plain, else the uuid. */
export const objectDir = (name: string, uuid: string) => (/^[A-Za-z0-9_]+$/.test(name) ? `${name}/` : `${uuid}/`);

/** Hive-style partition directory the extension writes: `<column>=<url-encoded value>/`. */
export const partitionDir = (column: string, value: string) =>
  `${encodeURIComponent(column)}=${encodeURIComponent(value)}/`;

/**
 * A fresh data file path relative to the data path, laid out as the extension does:
 * `<schema>/<table>/[<col>=<value>/]ducklake-<uuid v7>.parquet` (DuckLake "Paths").
 */
export function newDataFilePath(table: Pick<TableInfo, "dataDir" | "partitionBy">, partitionValue?: string): string {
  if ((table.partitionBy === undefined) !== (partitionValue === undefined)) {
    throw new AppError(
      "VALIDATION",
      `partition value ${String(partitionValue)} does not match the partitioning (${table.partitionBy ?? "none"})`,
    );
  }
  const part =
    table.partitionBy === undefined || partitionValue === undefined
      ? ""
      : partitionDir(table.partitionBy, partitionValue);
  return `${table.dataDir}${part}ducklake-${Bun.randomUUIDv7()}.parquet`;
}
