/**
 * Field-value and timestamp number rules of the InfluxDB line protocol, as the strict reference
 * decoder (influxdata/line-protocol v2, which the corpus was generated with) applies them: it hands
 * the raw token to Go's strconv, so the accepted syntax is Go's, not JavaScript's. `Number()` alone
 * would accept things Go rejects ("0x10", "Infinity", " 1", "1\t") and reject things Go accepts
 * ("1_000", "0x1p-2"), so every token is checked here first and only then converted.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** Outcome of a numeric conversion; `syntax` and `range` are the two failure reasons Go reports. */
export type NumberOutcome<T> = T | "syntax" | "range";

const isDigit = (c: number) => c >= 48 && c <= 57;
const isHexDigit = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);

/**
 * Decimal integer as Go `strconv.ParseInt(s, 10, 64)` reads it: optional sign, one or more ASCII
 * digits (leading zeros allowed), no underscores (those are only allowed with base 0).
 */
export function parseInt64(s: string, start = 0, end = s.length): NumberOutcome<bigint> {
  const c0 = s.charCodeAt(start);
  const neg = c0 === 45;
  const from = neg || c0 === 43 ? start + 1 : start;
  return parseDecimal(s, from, end, neg, neg ? "9223372036854775808" : "9223372036854775807");
}

/** Go `strconv.ParseUint(s, 10, 64)`: digits only (no sign at all), up to 2^64-1. */
export function parseUint64(s: string, start = 0, end = s.length): NumberOutcome<bigint> {
  return parseDecimal(s, start, end, false, "18446744073709551615");
}

/**
 * Digits in s[start, end), range-checked against `limit` (the largest magnitude, as a
 * digit string) by comparing significant-digit counts and then the digits themselves, which keeps
 * BigInt arithmetic off the hot path: most values are built from a double, only long ones from text.
 */
function parseDecimal(s: string, start: number, n: number, neg: boolean, limit: string): NumberOutcome<bigint> {
  if (start >= n) return "syntax";
  let firstSignificant = -1;
  let acc = 0;
  for (let j = start; j < n; j++) {
    const d = s.charCodeAt(j) - 48;
    if (d < 0 || d > 9) return "syntax";
    if (firstSignificant < 0 && d !== 0) firstSignificant = j;
    acc = acc * 10 + d;
  }
  if (firstSignificant < 0) return 0n;
  const significant = n - firstSignificant;
  // Up to 15 digits the double accumulator is exact.
  if (significant <= 15) return BigInt(neg ? -acc : acc);
  if (significant > limit.length) return "range";
  const digits = s.slice(firstSignificant, n);
  if (significant === limit.length && digits > limit) return "range";
  const magnitude = BigInt(digits);
  return neg ? -magnitude : magnitude;
}

/**
 * Go `strconv.ParseFloat(s, 64)` accepted syntax: optional sign, decimal mantissa with optional
 * point and `e` exponent, or `0x` hex mantissa with a mandatory `p` exponent; `_` only between
 * digits. Overflow is a range error; Inf and NaN are rejected by the line protocol anyway
 * ("non-number cannot be represented"), so their spellings are simply syntax errors here.
 */
export function parseGoFloat(s: string, start = 0, end = s.length): NumberOutcome<number> {
  const c0 = s.charCodeAt(start);
  const neg = c0 === 45;
  const from = neg || c0 === 43 ? start + 1 : start;
  const quick = quickDecimal(s, from, end, neg);
  if (quick !== undefined) return quick;
  return generalFloat(start === 0 && end === s.length ? s : s.slice(start, end));
}

function generalFloat(s: string): NumberOutcome<number> {
  const n = s.length;
  let i = 0;
  let neg = false;
  if (n === 0) return "syntax";
  let c = s.charCodeAt(0);
  if (c === 43 || c === 45) {
    neg = c === 45;
    i = 1;
  }
  if (i + 2 < n && s.charCodeAt(i) === 48 && (s.charCodeAt(i + 1) | 0x20) === 120 /* x */) {
    return parseHexFloat(s, i + 2, neg);
  }
  let sawDigits = false;
  let sawDot = false;
  let underscores = false;
  for (; i < n; i++) {
    c = s.charCodeAt(i);
    if (isDigit(c)) sawDigits = true;
    else if (c === 46 /* . */ && !sawDot) sawDot = true;
    else if (c === 95 /* _ */) underscores = true;
    else break;
  }
  if (!sawDigits) return "syntax";
  if (i < n && (s.charCodeAt(i) | 0x20) === 101 /* e */) {
    i = readExponentDigits(s, i + 1);
    if (i < 0) return "syntax";
    underscores ||= s.includes("_");
  }
  if (i !== n) return "syntax";
  if (underscores && !underscoresOk(s, false)) return "syntax";
  const v = Number(underscores ? s.replaceAll("_", "") : s);
  if (Number.isNaN(v)) return "syntax";
  return Number.isFinite(v) ? v : "range";
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * Fast path for the common telegraf shape `digits[.digits]` with at most 15 digits: the digits form
 * an exact integer below 2^53 and 10^k is exact, so one IEEE division is correctly rounded, the same
 * double Go's parser returns. Anything else (exponent, underscores, long mantissas) returns
 * undefined and takes the general path.
 */
function quickDecimal(s: string, start: number, n: number, neg: boolean): number | undefined {
  if (n - start > 16) return undefined;
  let mant = 0;
  let digits = 0;
  let dot = -1;
  for (let i = start; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      mant = mant * 10 + (c - 48);
      digits++;
    } else if (c === 46 && dot < 0) dot = i;
    else return undefined;
  }
  if (digits === 0 || digits > 15) return undefined;
  const v = dot < 0 ? mant : mant / POW10[n - 1 - dot]!;
  return neg ? -v : v;
}

/** Reads `[+-]digits` (underscores allowed, checked later) and returns the index after it, or -1. */
function readExponentDigits(s: string, i: number): number {
  const n = s.length;
  if (i >= n) return -1;
  const c = s.charCodeAt(i);
  if (c === 43 || c === 45) i++;
  if (i >= n || !isDigit(s.charCodeAt(i))) return -1;
  while (i < n && (isDigit(s.charCodeAt(i)) || s.charCodeAt(i) === 95)) i++;
  return i;
}

/** Go's rule: an underscore must sit between two digits (a base prefix counts as a digit). */
function underscoresOk(s: string, hex: boolean): boolean {
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 || c0 === 45) i = 1;
  // 0 = last was digit or prefix, 1 = underscore, 2 = other, 3 = start
  let saw = 3;
  if (hex) {
    i += 2;
    saw = 0;
  }
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c) || (hex && isHexDigit(c))) saw = 0;
    else if (c === 95) {
      if (saw !== 0) return false;
      saw = 1;
    } else {
      if (saw === 1) return false;
      saw = 2;
    }
  }
  return saw !== 1;
}

/** `0x` mantissa `[.]` hex digits, then mandatory `p[+-]decimal` binary exponent; rounded to nearest even. */
function parseHexFloat(s: string, start: number, neg: boolean): NumberOutcome<number> {
  const n = s.length;
  let i = start;
  let mant = 0n;
  let fracDigits = 0;
  let sawDigits = false;
  let sawDot = false;
  let underscores = false;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (isHexDigit(c)) {
      sawDigits = true;
      mant = mant * 16n + BigInt(parseInt(s[i] ?? "0", 16));
      if (sawDot) fracDigits++;
    } else if (c === 46 && !sawDot) sawDot = true;
    else if (c === 95) underscores = true;
    else break;
  }
  if (!sawDigits || i >= n || (s.charCodeAt(i) | 0x20) !== 112 /* p */) return "syntax";
  const expStart = i + 1;
  i = readExponentDigits(s, expStart);
  if (i < 0 || i !== n) return "syntax";
  if ((underscores || s.includes("_", expStart)) && !underscoresOk(s, true)) return "syntax";
  const expText = s.slice(expStart).replaceAll("_", "");
  // Exponents beyond ±100000 saturate, as Go's reader does, so absurd inputs stay cheap.
  const expVal = Math.max(-100000, Math.min(100000, Number(expText)));
  const v = scaleBinary(mant, expVal - 4 * fracDigits);
  if (v === "range") return v;
  return neg ? -v : v;
}

/** mant * 2^exp rounded to the nearest double (ties to even), "range" on overflow. */
function scaleBinary(mant: bigint, exp: number): NumberOutcome<number> {
  if (mant === 0n) return 0;
  const bits = mant.toString(2).length;
  const top = bits - 1 + exp; // exponent of the leading bit
  if (top > 1023) return "range";
  // Significant bits a double can hold at this magnitude (fewer when subnormal).
  const keep = top >= -1022 ? 53 : 53 - (-1022 - top);
  if (keep <= 0) {
    // Below half the smallest subnormal rounds to zero; exactly half ties to even (zero).
    return keep === 0 && mant > 1n << BigInt(bits - 1) ? 2 ** -1074 : 0;
  }
  let q = mant;
  let e = exp;
  const shift = bits - keep;
  if (shift > 0) {
    const big = BigInt(shift);
    q = mant >> big;
    const rem = mant - (q << big);
    const half = 1n << (big - 1n);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
    e += shift;
  }
  // q <= 2^53 and q * 2^e is representable, so two exact power-of-two steps cannot double-round.
  const first = Math.max(e, -1000);
  const v = Number(q) * 2 ** first * 2 ** (e - first);
  return Number.isFinite(v) ? v : "range";
}

/** The five spellings per truth value the reference accepts (t, T, true, True, TRUE / f, …). */
export function parseLpBoolean(s: string): boolean | "syntax" {
  switch (s) {
    case "t":
    case "T":
    case "true":
    case "True":
    case "TRUE":
      return true;
    case "f":
    case "F":
    case "false":
    case "False":
    case "FALSE":
      return false;
    default:
      return "syntax";
  }
}
