/**
 * The entry grammar of the line protocol over a decoded body (rules and the multi-line policy are
 * described in parse.ts). One instance parses one body, front to back, with char codes only.
 *
 * Over 400 lines on purpose: one recursive-descent pass over the grammar (measurement, tag set,
 * field set, timestamp, their escapes and errors); each production reads the shared cursor, and
 * the grammar is easiest to check against the reference when it reads as one piece.
 */
import {
  BACKSLASH,
  CLASS,
  COMMA,
  COMMENT,
  CR,
  EQUALS,
  ESC_KEY,
  ESC_MEASUREMENT,
  ESCAPE,
  FIELD_VALUE,
  isSeparator,
  KEY,
  LF,
  MEASUREMENT,
  QUOTE,
  show,
  SPACE,
  TAG_VALUE,
} from "./charset.ts";
import type { LpError, LpErrorReason, LpField, LpParseResult, LpPoint } from "./types.ts";
import { hasOffsetIn } from "./utf8.ts";
import { INT64_MAX, INT64_MIN, parseGoFloat, parseInt64, parseLpBoolean, parseUint64 } from "./values.ts";

export class LineScanner {
  private pos = 0;
  private line = 1;
  private lineStart = 0;
  private readonly points: LpPoint[] = [];
  private readonly errors: LpError[] = [];

  constructor(
    private readonly s: string,
    private readonly factor: bigint,
    private readonly defaultTime: bigint | null,
    /** Offsets of bytes that were not UTF-8 (replaced by U+FFFD); null when the body was valid. */
    private readonly badOffsets: number[] | null,
  ) {}

  run(): LpParseResult {
    for (;;) {
      this.skipEmptyLines();
      if (this.pos >= this.s.length) break;
      if (!this.entry()) this.skipRestOfLine();
    }
    return { points: this.points, errors: this.errors };
  }

  /** One entry; false after an error was recorded (the caller then skips to the next line). */
  private entry(): boolean {
    const startLine = this.line;
    const measurement = this.measurement();
    if (measurement === null) return false;
    const tags = this.tagSet();
    if (tags === null) return false;
    const fields: LpField[] = [];
    const timestampFollows = this.fieldSet(fields);
    if (timestampFollows === null) return false;
    let timeNs = this.defaultTime;
    if (timestampFollows) {
      const t = this.timestamp();
      if (t === false) return false;
      if (t !== null) timeNs = t;
    }
    return this.finish(measurement, tags, fields, timeNs, startLine);
  }

  private measurement(): string | null {
    const at = this.pos;
    const measurement = this.takeEscaped(MEASUREMENT, ESC_MEASUREMENT);
    if (measurement === null) return null;
    if (measurement.length === 0)
      return this.failNull("bad_measurement", `invalid character ${show(this.s[at])} at start of measurement`, at);
    // A comment with a control character in it is not skipped and lands here (reference behaviour).
    if (this.s.charCodeAt(at) === 35)
      return this.failNull("bad_comment", "comment line contains a control character", at);
    return measurement;
  }

  /** `,key=value` pairs after the measurement, up to and including the spaces before the fields. */
  private tagSet(): Array<[string, string]> | null {
    const s = this.s;
    const n = s.length;
    const tags: Array<[string, string]> = [];
    if (this.pos < n && s.charCodeAt(this.pos) === COMMA && !this.tagComma()) return null;
    while (this.pos >= n || s.charCodeAt(this.pos) !== SPACE) {
      let at = this.pos;
      const key = this.takeEscaped(KEY, ESC_KEY);
      if (key === null) return null;
      if (key.length === 0 || this.pos >= n || s.charCodeAt(this.pos) !== EQUALS) {
        const next = s[this.pos];
        if (key.length === 0 && (next === undefined || next === "\n" || next === "\r")) {
          return this.failNull("missing_fields", "missing field set", this.pos);
        }
        if (key.length === 0) return this.failNull("bad_tag", `expected tag key or field set, found ${show(next)}`, at);
        return this.failNull("bad_tag", `expected '=' after tag key ${show(key)}, found ${show(next)}`, this.pos);
      }
      this.pos++;
      at = this.pos;
      const value = this.takeEscaped(TAG_VALUE, ESC_KEY);
      if (value === null) return null;
      if (value.length === 0) return this.failNull("bad_tag", `empty value for tag key ${show(key)}`, at);
      tags.push([key, value]);
      if (this.pos >= n) break; // no field set: reported by fieldSet
      if (s.charCodeAt(this.pos) === COMMA && !this.tagComma()) return null;
    }
    this.skipSpaces();
    return tags;
  }

  /** `key=value[,...]`; true when a timestamp section follows, false at the line end, null on error. */
  private fieldSet(fields: LpField[]): boolean | null {
    const s = this.s;
    const n = s.length;
    for (;;) {
      const at = this.pos;
      const key = this.takeEscaped(KEY, ESC_KEY);
      if (key === null) return null;
      if (key.length === 0) {
        const next = s[this.pos];
        if (next === undefined || next === "\n" || next === "\r") {
          return fields.length === 0
            ? this.failNull("missing_fields", "missing field set", at)
            : this.failNull("bad_field_key", "expected field key after ','", at);
        }
        return this.failNull("bad_field_key", `invalid character ${show(next)} at start of field key`, at);
      }
      if (this.pos >= n || s.charCodeAt(this.pos) !== EQUALS) {
        return this.failNull(
          "bad_field_key",
          `expected '=' after field key ${show(key)}, found ${show(s[this.pos])}`,
          this.pos,
        );
      }
      this.pos++;
      const field = this.fieldValue(key);
      if (field === null) return null;
      fields.push(field);
      if (this.pos >= n) return false;
      const c = s.charCodeAt(this.pos);
      if (c === COMMA) {
        this.pos++;
        continue;
      }
      if (!isSeparator(c))
        return this.failNull(
          "bad_field_value",
          `unexpected character ${show(s[this.pos])} after field ${show(key)}`,
          this.pos,
        );
      this.skipSpaces();
      return !this.atLineEnd();
    }
  }

  /** Signed int64 in the request precision, converted to ns; null when empty, false on error. */
  private timestamp(): bigint | null | false {
    const s = this.s;
    const n = s.length;
    const at = this.pos;
    while (this.pos < n) {
      const c = s.charCodeAt(this.pos);
      if (c !== 45 && (c < 48 || c > 57)) break;
      this.pos++;
    }
    const end = this.pos;
    if (this.pos < n) {
      if (!isSeparator(s.charCodeAt(this.pos))) {
        return this.fail("bad_timestamp", `invalid timestamp ${show(s.slice(at, lineEndIndex(s, at)))}`, at);
      }
      this.skipSpaces();
      if (!this.atLineEnd())
        return this.fail(
          "unexpected_text",
          `unexpected text after timestamp: ${show(s.slice(this.pos, lineEndIndex(s, this.pos)))}`,
          this.pos,
        );
    }
    if (end === at) return null;
    const t = parseInt64(s, at, end);
    if (t === "syntax") return this.fail("bad_timestamp", `invalid timestamp ${show(s.slice(at, end))}`, at);
    const ns = t === "range" ? null : this.factor === 1n ? t : t * this.factor;
    // parseInt64 already bounds the raw value; only a precision multiplier can leave int64.
    if (ns === null || (this.factor !== 1n && (ns < INT64_MIN || ns > INT64_MAX))) {
      return this.fail(
        "timestamp_out_of_range",
        `timestamp ${s.slice(at, end)} is out of the int64 nanosecond range`,
        at,
      );
    }
    return ns;
  }

  /** The entry parsed; the read point is at its line end (not yet consumed). */
  private finish(
    measurement: string,
    tags: Array<[string, string]>,
    fields: LpField[],
    timeNs: bigint | null,
    startLine: number,
  ): boolean {
    const dup = duplicateKey(tags);
    if (dup !== null) return this.failAt("duplicate_tag", `duplicate tag key ${show(dup)}`, startLine, 1);
    this.consumeLineEnd();
    this.points.push({ measurement, tags, fields, timeNs, line: startLine });
    return true;
  }

  /** Field value after `=`: quoted string, boolean, or number with optional i/u suffix. */
  private fieldValue(key: string): LpField | null {
    const s = this.s;
    const n = s.length;
    const at = this.pos;
    const c0 = s.charCodeAt(at);
    if (c0 === QUOTE) {
      this.pos++;
      const value = this.takeString();
      if (value === null) return null;
      if (this.pos >= n)
        return this.failNull("unterminated_string", `string value of field ${show(key)} has no closing quote`, at);
      this.pos++;
      return { key, type: "string", value };
    }
    const isBool = c0 === 116 || c0 === 84 || c0 === 102 || c0 === 70; // t T f F
    const isNumber = c0 === 45 || c0 === 46 || (c0 >= 48 && c0 <= 57); // - . 0-9
    if (!isBool && !isNumber) {
      const missing = at >= n || c0 === SPACE || c0 === COMMA || c0 === LF || c0 === CR;
      return this.failNull(
        "bad_field_value",
        missing ? `missing value for field ${show(key)}` : `value of field ${show(key)} has an unrecognized type`,
        at,
      );
    }
    const p = this.endOfClass(at + 1, FIELD_VALUE);
    this.pos = p;
    if (isBool) {
      const b = parseLpBoolean(s.slice(at, p));
      if (b !== "syntax") return { key, type: "boolean", value: b };
      return this.failNull("bad_field_value", `invalid boolean ${show(s.slice(at, p))} for field ${show(key)}`, at);
    }
    // Numbers are read in place (no token string) unless they fail.
    const suffix = s.charCodeAt(p - 1);
    let outcome: "syntax" | "range";
    if (suffix === 105 /* i */) {
      const v = parseInt64(s, at, p - 1);
      if (typeof v === "bigint") return { key, type: "integer", value: v };
      outcome = v;
    } else if (suffix === 117 /* u */) {
      const v = parseUint64(s, at, p - 1);
      if (typeof v === "bigint") return { key, type: "unsigned", value: v };
      outcome = v;
    } else {
      const v = parseGoFloat(s, at, p);
      if (typeof v === "number") return { key, type: "float", value: v };
      outcome = v;
    }
    const token = s.slice(at, p);
    const kind = suffix === 105 ? "integer" : suffix === 117 ? "unsigned integer" : "float";
    if (outcome === "syntax")
      return this.failNull("bad_field_value", `invalid ${kind} value ${show(token)} for field ${show(key)}`, at);
    const limit = suffix === 105 ? "int64" : suffix === 117 ? "uint64" : "float64";
    return this.failNull(
      "value_out_of_range",
      `${kind} value ${token} of field ${show(key)} is out of the ${limit} range`,
      at,
    );
  }

  /** Token of the given class, with the class's escapes removed; null (error recorded) when not UTF-8. */
  private takeEscaped(cls: number, esc: number): string | null {
    const s = this.s;
    const n = s.length;
    const start = this.pos;
    let pos = start;
    let seg = start;
    let out: string | null = null;
    while (pos < n) {
      const c = s.charCodeAt(pos);
      if (c === BACKSLASH) {
        if (pos + 1 >= n) {
          pos = n; // trailing backslash stays
          break;
        }
        const e = s.charCodeAt(pos + 1);
        if (e < 128 && (ESCAPE[e]! & esc) !== 0) {
          out = (out ?? "") + s.slice(seg, pos);
          seg = pos + 1; // the escaped character starts the next segment
          pos += 2;
        } else pos++;
        continue;
      }
      if (c < 128 && (CLASS[c]! & cls) === 0) break;
      pos++;
    }
    return this.endToken(start, pos, seg, out);
  }

  /** Body of a quoted string up to (not including) the closing quote; counts the lines it spans. */
  private takeString(): string | null {
    const s = this.s;
    const n = s.length;
    const start = this.pos;
    let pos = start;
    let seg = start;
    let out: string | null = null;
    for (; pos < n; pos++) {
      const c = s.charCodeAt(pos);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        const e = s.charCodeAt(pos + 1);
        if (e === BACKSLASH || e === QUOTE) {
          out = (out ?? "") + s.slice(seg, pos);
          seg = pos + 1;
          pos++;
        }
      } else if (c === LF) {
        this.line++;
        this.lineStart = pos + 1;
      }
    }
    return this.endToken(start, pos, seg, out);
  }

  /**
   * Ends a token s[start, end): `out` holds the unescaped text before `seg`, if any escape was seen.
   * The reference rejects a token with invalid UTF-8 and resumes after the token's line.
   */
  private endToken(start: number, end: number, seg: number, out: string | null): string | null {
    this.pos = end;
    if (this.badOffsets !== null && hasOffsetIn(this.badOffsets, start, end)) {
      return this.failNull("invalid_utf8", "invalid UTF-8 sequence", start);
    }
    return out === null ? this.s.slice(start, end) : out + this.s.slice(seg, end);
  }

  /** After a comma that follows the measurement or a tag value: a tag key must follow. */
  private tagComma(): boolean {
    this.pos++;
    if (this.pos >= this.s.length)
      return this.fail("bad_tag", "expected tag key after ',', found end of input", this.pos);
    if (isSeparator(this.s.charCodeAt(this.pos)))
      return this.fail("bad_tag", "expected tag key after ',', found white space", this.pos);
    return true;
  }

  private skipEmptyLines(): void {
    const s = this.s;
    const n = s.length;
    for (;;) {
      this.skipSpaces();
      if (this.pos >= n) return;
      const c = s.charCodeAt(this.pos);
      if (c === 35 /* # */) {
        const hash = this.pos;
        this.pos = this.endOfClass(hash + 1, COMMENT);
        if (this.atLineEnd()) {
          this.consumeLineEnd();
          continue;
        }
        this.pos = hash; // control character inside: let the entry parser report it
        return;
      }
      if (c !== LF && c !== CR) return;
      if (!this.atLineEnd()) return; // lone CR: reported as a bad measurement
      this.consumeLineEnd();
    }
  }

  /** First index at or after `from` outside the class (code units from 128 up are in every class). */
  private endOfClass(from: number, cls: number): number {
    const s = this.s;
    let p = from;
    while (p < s.length) {
      const c = s.charCodeAt(p);
      if (c < 128 && (CLASS[c]! & cls) === 0) break;
      p++;
    }
    return p;
  }

  private skipSpaces(): void {
    const s = this.s;
    while (this.pos < s.length && s.charCodeAt(this.pos) === SPACE) this.pos++;
  }

  /** End of input, LF, CRLF, or a CR that is the last character. */
  private atLineEnd(): boolean {
    const s = this.s;
    const p = this.pos;
    if (p >= s.length) return true;
    const c = s.charCodeAt(p);
    return c === LF || (c === CR && (p + 1 >= s.length || s.charCodeAt(p + 1) === LF));
  }

  private consumeLineEnd(): void {
    const s = this.s;
    if (this.pos < s.length && s.charCodeAt(this.pos) === CR) this.pos++;
    if (this.pos < s.length && s.charCodeAt(this.pos) === LF) this.newLineAt(this.pos);
  }

  /** Error recovery: drop everything up to and including the next LF. */
  private skipRestOfLine(): void {
    const nl = this.s.indexOf("\n", this.pos);
    if (nl < 0) this.pos = this.s.length;
    else this.newLineAt(nl);
  }

  private newLineAt(lfIndex: number): void {
    this.pos = lfIndex + 1;
    this.line++;
    this.lineStart = this.pos;
  }

  private fail(reason: LpErrorReason, message: string, at: number): false {
    // Errors normally sit on the current line; an unterminated string may point lines back.
    let line = this.line;
    let lineStart = this.lineStart;
    if (at < lineStart) {
      for (let i = at; i < this.lineStart; i++) if (this.s.charCodeAt(i) === LF) line--;
      lineStart = at === 0 ? 0 : this.s.lastIndexOf("\n", at - 1) + 1;
    }
    return this.failAt(reason, message, line, at - lineStart + 1);
  }

  private failNull(reason: LpErrorReason, message: string, at: number): null {
    this.fail(reason, message, at);
    return null;
  }

  private failAt(reason: LpErrorReason, message: string, line: number, column: number): false {
    this.errors.push({ line, column, reason, message });
    return false;
  }
}

/**
 * The reference decoder hands back duplicate tag keys; the corpus (and InfluxDB) reject such a
 * point, since a series key cannot hold one tag twice. Few tags: pairwise; many: a set.
 */
function duplicateKey(tags: Array<[string, string]>): string | null {
  const n = tags.length;
  if (n < 2) return null;
  if (n <= 16) {
    for (let i = 1; i < n; i++) {
      const k = tags[i]![0];
      for (let j = 0; j < i; j++) if (tags[j]![0] === k) return k;
    }
    return null;
  }
  const seen = new Set<string>();
  for (const [k] of tags) {
    if (seen.has(k)) return k;
    seen.add(k);
  }
  return null;
}

function lineEndIndex(s: string, from: number): number {
  let i = from;
  while (i < s.length && s.charCodeAt(i) !== LF && s.charCodeAt(i) !== CR) i++;
  return i;
}
