/**
 * Reading OTLP values the same way whether they come from protobuf (protobufjs messages: Long
 * integers, byte arrays, lowerCamelCase names) or from OTLP/JSON (hex ids, integers as strings or
 * numbers, lowerCamelCase or the proto's snake_case names). docs/OTLP.md "Columns" says what each
 * column gets.
 */

export type Obj = Record<string, unknown>;

const SNAKE = new Map<string, string>();
const snake = (camel: string): string => {
  let s = SNAKE.get(camel);
  if (s === undefined) {
    s = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    SNAKE.set(camel, s);
  }
  return s;
};

const hasOwn = Object.prototype.hasOwnProperty;

/** An own member (protobufjs keeps defaults on the prototype: absent fields are not own). */
export function get(o: unknown, camel: string): unknown {
  if (o === null || typeof o !== "object") return undefined;
  if (hasOwn.call(o, camel)) return (o as Obj)[camel];
  const s = snake(camel);
  return s !== camel && hasOwn.call(o, s) ? (o as Obj)[s] : undefined;
}

export const isObj = (v: unknown): v is Obj =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);

export function list(o: unknown, camel: string): unknown[] {
  const v = get(o, camel);
  return Array.isArray(v) ? v : [];
}

export function text(o: unknown, camel: string): string {
  const v = get(o, camel);
  return typeof v === "string" ? v : "";
}

/** Text for a VARCHAR column: NUL cannot be stored in the lake's spool, so it becomes U+FFFD. */
export const clean = (s: string): string => (s.includes("\0") ? s.replaceAll("\0", "\uFFFD") : s);

/** A 64-bit integer (Long, bigint, decimal string or number) as bigint; undefined when not one. */
export function big(v: unknown): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isFinite(v) ? BigInt(Math.trunc(v)) : undefined;
  if (typeof v === "string") return /^-?\d{1,20}$/.test(v.trim()) ? BigInt(v.trim()) : undefined;
  if (typeof v === "object" && "low" in v && "high" in v) {
    const l = v as { low: number; high: number; unsigned?: boolean };
    const u = (BigInt(l.high >>> 0) << 32n) | BigInt(l.low >>> 0);
    return l.unsigned ? u : BigInt.asIntN(64, u);
  }
  return undefined;
}

/** A 64-bit integer as a JSON value: a number when exact, else its decimal text. */
export function jsonInt(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

export function num(o: unknown, camel: string): number | undefined {
  const v = get(o, camel);
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    // OTLP/JSON spells non-finite doubles as strings.
    if (v === "NaN") return Number.NaN;
    if (v === "Infinity") return Number.POSITIVE_INFINITY;
    if (v === "-Infinity") return Number.NEGATIVE_INFINITY;
    const n = Number(v);
    return v.trim() !== "" && Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** Epoch nanoseconds → epoch microseconds for a TIMESTAMP column; 0 or absent → undefined. */
export function nanosToUs(v: unknown): number | undefined {
  const n = big(v);
  if (n === undefined || n <= 0n) return undefined;
  return Number(n / 1000n);
}

export const HEX = Array.from({ length: 256 }, (_v, i) => i.toString(16).padStart(2, "0"));

export function hex(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += HEX[b[i]!];
  return s;
}

/**
 * A trace or span id as lower-case hex. Protobuf gives bytes; OTLP/JSON gives hex text. Empty →
 * "". `undefined` when malformed (not hex, or not `bytes` long): the item is rejected.
 */
export function id(o: unknown, camel: string, bytes: number): string | undefined {
  const v = get(o, camel);
  if (v === undefined || v === null) return "";
  let h: string;
  if (v instanceof Uint8Array) h = hex(v);
  else if (typeof v === "string") {
    if (!/^[0-9A-Fa-f]*$/.test(v)) return undefined;
    h = v.toLowerCase();
  } else return undefined;
  if (h === "") return "";
  return h.length === bytes * 2 ? h : undefined;
}

const toBase64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

/** Nesting of arrays and maps in one value at most; deeper values reject their item (a client could blow the stack). */
export const MAX_VALUE_DEPTH = 32;

export class TooDeep extends Error {}

/** An AnyValue as a JSON value: string, boolean, number (int64 beyond 2^53 as text), array, object, bytes as base64. */
export function anyValue(v: unknown, depth = 0): unknown {
  if (!isObj(v)) return null;
  if (depth > MAX_VALUE_DEPTH) throw new TooDeep(`a value nests arrays or maps deeper than ${MAX_VALUE_DEPTH} levels`);
  let x = get(v, "stringValue");
  if (typeof x === "string") return x;
  x = get(v, "boolValue");
  if (typeof x === "boolean") return x;
  x = get(v, "intValue");
  if (x !== undefined) {
    const n = big(x);
    return n === undefined ? null : jsonInt(n);
  }
  x = get(v, "doubleValue");
  if (x !== undefined) return num(v, "doubleValue") ?? null;
  x = get(v, "arrayValue");
  if (x !== undefined) return list(x, "values").map((e) => anyValue(e, depth + 1));
  x = get(v, "kvlistValue");
  if (x !== undefined) return attributes(list(x, "values"), depth + 1);
  x = get(v, "bytesValue");
  if (x instanceof Uint8Array) return toBase64(x);
  if (typeof x === "string") return x;
  return null;
}

/** KeyValue list → one JSON object (a repeated key keeps its last value). */
export function attributes(kvs: unknown[], depth = 0): Obj {
  const out: Obj = {};
  for (const kv of kvs) {
    const k = get(kv, "key");
    if (typeof k === "string") out[k] = anyValue(get(kv, "value"), depth);
  }
  return out;
}

/** JSON text of a value; a non-finite double (not JSON) is spelled as OTLP/JSON does. */
export function toJson(v: unknown, bytesAsHex: ReadonlySet<string> = ID_FIELDS): string {
  return JSON.stringify(v, function (this: Obj, key: string, val: unknown) {
    const orig = this[key];
    if (orig instanceof Uint8Array) return bytesAsHex.has(key) ? hex(orig) : toBase64(orig);
    if (typeof val === "bigint") return val.toString();
    if (typeof val === "number" && !Number.isFinite(val))
      return Number.isNaN(val) ? "NaN" : val > 0 ? "Infinity" : "-Infinity";
    return val;
  });
}

/** Byte fields that OTLP/JSON spells as hex (every other bytes field is base64). */
export const ID_FIELDS: ReadonlySet<string> = new Set([
  "traceId",
  "spanId",
  "parentSpanId",
  "trace_id",
  "span_id",
  "parent_span_id",
]);

/**
 * The protobuf JSON mapping lets an enum be written by name as well as by number (OTLP/JSON
 * exporters write numbers, hand-written payloads and some SDKs names). Names of the enums a row
 * column takes (docs/OTLP.md "Columns").
 */
const ENUM_NAMES: Record<string, Record<string, number>> = {
  kind: {
    SPAN_KIND_UNSPECIFIED: 0,
    SPAN_KIND_INTERNAL: 1,
    SPAN_KIND_SERVER: 2,
    SPAN_KIND_CLIENT: 3,
    SPAN_KIND_PRODUCER: 4,
    SPAN_KIND_CONSUMER: 5,
  },
  code: { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 },
  aggregationTemporality: {
    AGGREGATION_TEMPORALITY_UNSPECIFIED: 0,
    AGGREGATION_TEMPORALITY_DELTA: 1,
    AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
  },
  severityNumber: Object.fromEntries(
    [
      "UNSPECIFIED",
      "TRACE",
      "TRACE2",
      "TRACE3",
      "TRACE4",
      "DEBUG",
      "DEBUG2",
      "DEBUG3",
      "DEBUG4",
      "INFO",
      "INFO2",
      "INFO3",
      "INFO4",
      "WARN",
      "WARN2",
      "WARN3",
      "WARN4",
      "ERROR",
      "ERROR2",
      "ERROR3",
      "ERROR4",
      "FATAL",
      "FATAL2",
      "FATAL3",
      "FATAL4",
    ].map((n, i) => [`SEVERITY_NUMBER_${n}`, i]),
  ),
};

/** An enum member (`kind`, `code`, `severityNumber`, `aggregationTemporality`) by number or by its proto name. */
export function enumNum(o: unknown, camel: string): number | undefined {
  const v = get(o, camel);
  if (typeof v === "string") {
    const byName = ENUM_NAMES[camel]?.[v];
    if (byName !== undefined) return byName;
  }
  return num(o, camel);
}
