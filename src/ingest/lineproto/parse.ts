/**
 * InfluxDB line-protocol parser (docs/LINE-PROTOCOL.md "Body"):
 *   <measurement>[,<tag>=<value>...] <field>=<value>[,<field>=<value>...] [<timestamp>]
 *
 * Behaviour follows the strict reference decoder the corpus was generated with
 * (influxdata/line-protocol v2.1.0, package lineprotocol) character for character:
 * - measurement: any byte but `,`, space and control characters (0x00-0x1f, 0x7f); `\,` and `\ `
 *   are escapes. `=` is allowed unescaped.
 * - tag keys and field keys: any byte but `,`, `=`, space and control characters; tag values allow
 *   control characters except CR/LF. `\,` `\=` `\ ` are escapes in all three.
 * - string field values: anything but an unescaped `"` (newlines included); `\\` and `\"` are the
 *   only escapes.
 * - everywhere else a backslash before a character that is not an escape stays literal, and a
 *   backslash at the end of the input is kept.
 * - numbers use Go's syntax (values.ts); booleans t/T/true/True/TRUE and f/F/false/False/FALSE;
 *   anything else (`+1`, `NaN`, `value=`, bare words) is "unrecognized type".
 * - separators are single or repeated spaces; tabs are not white space. Lines end in LF or CRLF
 *   (a lone CR only at the end of input). Leading spaces, blank lines and comment lines (`#` up to
 *   the end of the line, printable characters only) are skipped.
 * - duplicate tag keys reject the point; duplicate field keys are kept in order (the reference
 *   accepts them; the writer decides which one wins).
 *
 * Multi-line rule: the reference stops at the first error and rejects the whole body. Our receiver
 * writes the good points and answers 400 listing the bad lines, so this parser keeps going: after an
 * error it resumes at the next physical line (exactly where the reference's own recovery resumes)
 * and returns every good point together with one error per bad entry. A body the reference rejects
 * therefore always yields at least one error here.
 */
import { LineScanner } from "./scanner.ts";
import { decodeBody } from "./utf8.ts";

export type {
  LpError,
  LpErrorReason,
  LpField,
  LpFieldType,
  LpFieldValue,
  LpParseOptions,
  LpParseResult,
  LpPoint,
  LpPrecision,
} from "./types.ts";
import type { LpParseOptions, LpParseResult, LpPrecision } from "./types.ts";

/** Nanoseconds per unit of each write precision. */
export const PRECISION_NS: Record<LpPrecision, bigint> = { ns: 1n, us: 1_000n, ms: 1_000_000n, s: 1_000_000_000n };

/**
 * Parses a whole request body. Pass the raw bytes when you have them: invalid UTF-8 is then
 * rejected per entry like the reference does (a string has already lost that information).
 */
export function parseLineProtocol(body: string | Uint8Array, opts: LpParseOptions): LpParseResult {
  const factor = PRECISION_NS[opts.precision];
  const defaultTime = opts.nowNs === undefined ? null : floorTo(opts.nowNs, factor);
  if (typeof body === "string") return new LineScanner(body, factor, defaultTime, null).run();
  const decoded = decodeBody(body);
  return new LineScanner(decoded.text, factor, defaultTime, decoded.badOffsets).run();
}

/** Go's Time.Truncate: round down (towards -inf) to a whole multiple of the precision. */
function floorTo(ns: bigint, factor: bigint): bigint {
  const r = ns % factor;
  return r < 0n ? ns - r - factor : ns - r;
}
