/**
 * Byte writers shared by the two row batches (CsvBatch: spool CSV; ColumnBatch: Parquet columns):
 * decimal integers, a JSON object written without building it, and UUIDv7 text. Each writes into
 * a growable buffer (`ByteSink`) at its end. These run once per row or per field on the ingest hot
 * path (docs/BENCHMARKS.md "Ingest: per-core costs").
 */
export interface ByteSink {
  buf: Uint8Array;
  len: number;
  /** Room for `extra` more bytes after `len` (may replace `buf`). */
  ensure(extra: number): void;
}

const encoder = new TextEncoder();
const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");
const DASH = 45;
/** Random bytes fetched at once for the UUIDs of 512 rows. */
const RANDOM_POOL = 4096;
/** The last UUIDv7 time of this thread, in 1/4096 ms: ids never go backwards on one thread. */
let lastUuidTick = 0;
const UUID_TICKS_PER_SECOND = 4096 * 1000;

/** JSON.stringify's two-character escapes: `"` `\\` \b \f \n \r \t (0: use \u00XX). */
const JSON_SHORT_ESCAPE = new Uint8Array(128);
for (const [c, e] of [
  [34, 34],
  [92, 92],
  [8, 98],
  [12, 102],
  [10, 110],
  [13, 114],
  [9, 116],
] as const)
  JSON_SHORT_ESCAPE[c] = e;

/** A buffer of at least `need` bytes (doubling) holding the first `len` bytes of `buf`. */
export function grown(buf: Uint8Array, len: number, need: number): Uint8Array {
  let size = Math.max(64, buf.length * 2);
  while (size < need) size *= 2;
  const next = new Uint8Array(size);
  next.set(buf.subarray(0, len));
  return next;
}

export function hexAt(buf: Uint8Array, at: number, byte: number): number {
  buf[at] = HEX_DIGITS[byte >>> 4]!;
  buf[at + 1] = HEX_DIGITS[byte & 15]!;
  return at + 2;
}

export function asciiInto(s: ByteSink, text: string): void {
  s.ensure(text.length);
  const buf = s.buf;
  let len = s.len;
  for (let i = 0; i < text.length; i++) buf[len++] = text.charCodeAt(i);
  s.len = len;
}

/** A finite integer in decimal, digit by digit (no string); room for 24 bytes must be there. */
export function integerInto(s: ByteSink, v: number): void {
  const buf = s.buf;
  let len = s.len;
  if (v < 0) {
    buf[len++] = 45; // -
    v = -v;
  }
  if (v > Number.MAX_SAFE_INTEGER) {
    // Beyond 2^53 the digit arithmetic is inexact; String() gives the shortest exact form.
    s.len = len;
    asciiInto(s, String(v));
    return;
  }
  const start = len;
  do {
    const q = Math.floor(v / 10);
    buf[len++] = 48 + (v - q * 10);
    v = q;
  } while (v > 0);
  for (let i = start, j = len - 1; i < j; i++, j--) {
    const t = buf[i]!;
    buf[i] = buf[j]!;
    buf[j] = t;
  }
  s.len = len;
}

/**
 * `{members}` from keys and values in turn (ASCII keys that need no escaping; values strings,
 * finite numbers, booleans or flat string maps; undefined members are skipped): exactly
 * JSON.stringify's text for the same object, without building the object or the string
 * (data_extra of every HEP row). `dataKeys`: the keys come from the data and are escaped like values.
 */
export function jsonObjectInto(s: ByteSink, kv: readonly unknown[], dataKeys = false): void {
  s.ensure(1);
  s.buf[s.len++] = 123; // {
  let first = true;
  for (let i = 0; i < kv.length; i += 2) {
    const v = kv[i + 1];
    if (v === undefined) continue;
    const key = String(kv[i]);
    s.ensure(key.length + 4);
    if (!first) s.buf[s.len++] = 44; // ,
    first = false;
    if (dataKeys) jsonStringInto(s, key);
    else {
      const buf = s.buf;
      buf[s.len++] = 34;
      for (let k = 0; k < key.length; k++) buf[s.len++] = key.charCodeAt(k);
      buf[s.len++] = 34;
    }
    s.ensure(1);
    s.buf[s.len++] = 58; // :
    if (typeof v === "string") jsonStringInto(s, v);
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) asciiInto(s, "null");
      else if (Number.isSafeInteger(v)) {
        s.ensure(24);
        integerInto(s, v);
      } else asciiInto(s, String(v));
    } else if (typeof v === "boolean") asciiInto(s, v ? "true" : "false");
    else if (v === null) asciiInto(s, "null");
    else jsonObjectInto(s, Object.entries(v as Record<string, unknown>).flat(), true);
  }
  s.ensure(1);
  s.buf[s.len++] = 125; // }
}

/** A JSON string literal as JSON.stringify writes it (raw UTF-8 for non-ASCII). */
export function jsonStringInto(s: ByteSink, v: string): void {
  s.ensure(v.length * 6 + 2);
  const buf = s.buf;
  let len = s.len;
  buf[len++] = 34;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f && c !== 34 && c !== 92) {
      buf[len++] = c;
      continue;
    }
    if (c >= 0x7f) {
      // The rest through JSON.stringify (lone surrogates, non-ASCII): its escapes, raw UTF-8.
      const rest = JSON.stringify(v.slice(i));
      len += encoder.encodeInto(rest.slice(1, -1), buf.subarray(len)).written;
      break;
    }
    buf[len++] = 92; // backslash
    const short = JSON_SHORT_ESCAPE[c]!;
    if (short) buf[len++] = short;
    else {
      // \u00XX, lower-case hex like JSON.stringify; this also keeps CsvBatch's 0x01 quote out
      buf[len++] = 117;
      buf[len++] = 48;
      buf[len++] = 48;
      len = hexAt(buf, len, c);
    }
  }
  buf[len++] = 34;
  s.len = len;
}

export interface UuidState {
  random: Uint8Array;
  at: number;
}

export const newUuidState = (): UuidState => ({ random: new Uint8Array(RANDOM_POOL), at: RANDOM_POOL });

/**
 * A UUIDv7 (RFC 9562: 48-bit Unix ms, version 7, 12 bits of sub-millisecond time, 62 random bits)
 * as its 36 characters; room for them must be there. The 12 bits carry the fraction of the
 * millisecond (RFC 9562 method 3, ≈ 0.24 µs steps) and never go backwards on one thread (unless
 * the clock steps back by more than a second), so ordering rows by id follows the order they were
 * received in, also across ingest threads (docs/ARCHITECTURE.md "Several ingest threads").
 */
export function uuidv7Into(s: ByteSink, st: UuidState, nowMs: number): void {
  if (st.at + 8 > RANDOM_POOL) {
    crypto.getRandomValues(st.random);
    st.at = 0;
  }
  const r = st.random;
  let o = st.at;
  st.at += 8;
  let tick = Math.floor(nowMs * 4096);
  // A clock stepped back by more than a second (NTP, an operator) is taken as it is: ids then
  // carry the time they were written at rather than running on from the old time for hours.
  if (tick <= lastUuidTick && lastUuidTick - tick < UUID_TICKS_PER_SECOND) tick = lastUuidTick + 1;
  lastUuidTick = tick;
  const ms = Math.floor(tick / 4096);
  const frac = tick - ms * 4096;
  const buf = s.buf;
  let len = s.len;
  // time_high (32 bits) and time_mid (16 bits) of the millisecond timestamp
  const hi = Math.floor(ms / 65536);
  const lo = ms - hi * 65536;
  len = hexAt(buf, len, hi >>> 24);
  len = hexAt(buf, len, (hi >>> 16) & 255);
  len = hexAt(buf, len, (hi >>> 8) & 255);
  len = hexAt(buf, len, hi & 255);
  buf[len++] = DASH;
  len = hexAt(buf, len, lo >>> 8);
  len = hexAt(buf, len, lo & 255);
  buf[len++] = DASH;
  len = hexAt(buf, len, 0x70 | (frac >>> 8)); // version 7
  len = hexAt(buf, len, frac & 255);
  buf[len++] = DASH;
  len = hexAt(buf, len, 0x80 | (r[o++]! & 0x3f)); // variant 10
  len = hexAt(buf, len, r[o++]!);
  buf[len++] = DASH;
  for (let i = 0; i < 6; i++) len = hexAt(buf, len, r[o++]!);
  s.len = len;
}
