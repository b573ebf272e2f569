/**
 * Message framing shared by the hot-path parser and the decoded view: find the end of the header
 * section on bytes, decode only the header block, split the start line, walk header fields.
 */
import { fail, ok, type Result } from "../core/index.ts";
import { isLws, parseDigits, trimEnd } from "./uri.ts";

const LF = 10;
const CR = 13;
const utf8 = new TextDecoder("utf-8");
// Buffer#indexOf (a native memmem) and Buffer#toString accept any Uint8Array as `this` in Bun and
// Node; toString(start, end) decodes without creating a subarray view first (cheaper per message).
const byteIndexOf = Buffer.prototype.indexOf;
const bufferToString = Buffer.prototype.toString;

/** UTF-8 text of payload[start, end): invalid sequences become U+FFFD, never an exception. */
export const decodeUtf8 = (payload: Uint8Array, start: number, end: number): string => bufferToString.call(payload, "utf8", start, end);
const LF_CRLF = new Uint8Array([LF, CR, LF]);
const LF_LF = new Uint8Array([LF, LF]);

export interface SipFrame {
  /** Start line and header fields, UTF-8 decoded, without the empty line. */
  text: string;
  /** Byte offset just after the empty line (or the payload length when there is none). */
  bodyOffset: number;
}

/**
 * Locates the header section (RFC 3261 §7: start-line, headers, CRLF, body). Bare LF line ends are
 * accepted as many stacks send them. Leading CRLFs are skipped (§7.5; they are also the keep-alive of
 * RFC 5626 §3.5.1, reported as "empty"). When no empty line exists, a payload that ends with a line
 * end is taken as headers without a body (some senders and truncating captures omit the empty line);
 * one that stops mid-line is "no_header_end" (or "not_sip" when its first line is not SIP).
 */
export function frameSip(payload: Uint8Array): Result<SipFrame, "empty" | "not_sip" | "no_header_end"> {
  const n = payload.length;
  let start = 0;
  while (start < n && (payload[start] === CR || payload[start] === LF)) start++;
  if (start >= n) return fail("empty");
  const a = byteIndexOf.call(payload, LF_CRLF, start);
  const b = byteIndexOf.call(payload, LF_LF, start);
  let headerEnd: number;
  let bodyOffset: number;
  if (a >= 0 && (b < 0 || a < b)) {
    headerEnd = a;
    bodyOffset = a + 3;
  } else if (b >= 0) {
    headerEnd = b;
    bodyOffset = b + 2;
  } else if (payload[n - 1] === LF) {
    headerEnd = n - 1;
    bodyOffset = n;
  } else {
    return looksLikeSip(payload, start) ? fail("no_header_end") : fail("not_sip");
  }
  return ok({ text: decodeUtf8(payload, start, headerEnd), bodyOffset });
}

/** Whether the first line mentions a SIP version; used only to name a failure. */
function looksLikeSip(payload: Uint8Array, start: number): boolean {
  let lineEnd = payload.indexOf(LF, start);
  if (lineEnd < 0) lineEnd = Math.min(payload.length, start + 1024);
  return /SIP\/\d/i.test(utf8.decode(payload.subarray(start, lineEnd)));
}

export interface StartLine {
  isRequest: boolean;
  /** Request method ("" for responses). */
  method: string;
  requestUri: string | undefined;
  /** Request-URI bounds in the text (0, 0 for responses), for parsing it in place. */
  uriStart: number;
  uriEnd: number;
  statusCode: number | undefined;
  reasonPhrase: string | undefined;
  /** Index in the text where the first header line starts. */
  next: number;
}

/** RFC 3261 §25.1 token characters (the Method of a Request-Line is a token). */
function isTokenChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) ||
    c === 45 || c === 46 || c === 33 || c === 37 || c === 42 || c === 95 || c === 43 || c === 96 || c === 39 || c === 126
  );
}

/**
 * Request-Line (RFC 3261 §7.1: Method SP Request-URI SP SIP-Version) or Status-Line (§7.2:
 * SIP-Version SP Status-Code SP Reason-Phrase). Only SIP/2.0 is accepted; the version token is
 * case-insensitive (§7.1). A first line without any "SIP/" is "not_sip".
 */
export function parseStartLine(text: string): Result<StartLine, "not_sip" | "bad_start_line"> {
  let lineEnd = text.indexOf("\n");
  const next = lineEnd < 0 ? text.length : lineEnd + 1;
  if (lineEnd < 0) lineEnd = text.length;
  const end = trimEnd(text, 0, lineEnd);
  if (isSipVersion(text, 0)) {
    // "SIP/2.0" SP 3DIGIT [SP Reason-Phrase]; a missing reason phrase is tolerated.
    if (text.charCodeAt(7) !== 32) return fail("bad_start_line");
    const code = parseDigits(text, 8, 11);
    if (code === undefined || code < 100 || code > 699) return fail("bad_start_line");
    if (end > 11 && text.charCodeAt(11) !== 32) return fail("bad_start_line");
    const reasonPhrase = end > 12 ? text.slice(12, end) : "";
    return ok({ isRequest: false, method: "", requestUri: undefined, uriStart: 0, uriEnd: 0, statusCode: code, reasonPhrase, next });
  }
  let sp1 = 0;
  while (sp1 < end && isTokenChar(text.charCodeAt(sp1))) sp1++;
  const sp2 = text.lastIndexOf(" ", end - 1);
  const versionOk = sp2 > 0 && end - sp2 - 1 === 7 && isSipVersion(text, sp2 + 1);
  if (!versionOk) {
    const sip = text.indexOf("SIP/");
    return sip >= 0 && sip < end ? fail("bad_start_line") : fail("not_sip");
  }
  // Method must be a non-empty token followed by exactly one SP, and the URI must hold no blank.
  if (sp1 === 0 || text.charCodeAt(sp1) !== 32 || sp2 <= sp1 + 1) return fail("bad_start_line");
  const uriSpace = text.indexOf(" ", sp1 + 1);
  if (uriSpace !== sp2) return fail("bad_start_line");
  return ok({
    isRequest: true,
    method: text.slice(0, sp1),
    requestUri: text.slice(sp1 + 1, sp2),
    uriStart: sp1 + 1,
    uriEnd: sp2,
    statusCode: undefined,
    reasonPhrase: undefined,
    next,
  });
}

function isSipVersion(s: string, i: number): boolean {
  return (
    (s.charCodeAt(i) | 0x20) === 0x73 &&
    (s.charCodeAt(i + 1) | 0x20) === 0x69 &&
    (s.charCodeAt(i + 2) | 0x20) === 0x70 &&
    s.startsWith("/2.0", i + 3)
  );
}

/** One header field; indices into the header text. Reused between calls to avoid allocation. */
export interface HeaderField {
  nameStart: number;
  nameEnd: number;
  valueStart: number;
  valueEnd: number;
  /** The value spans continuation lines (§7.3.1); read it with headerValue(). */
  folded: boolean;
  /** False for a line without a colon or name; such lines are skipped by callers. */
  wellFormed: boolean;
}

export const newHeaderField = (): HeaderField => ({ nameStart: 0, nameEnd: 0, valueStart: 0, valueEnd: 0, folded: false, wellFormed: false });

/**
 * Reads the header field starting at `pos` into `out` and returns the index of the next field
 * (text.length at the end). Continuation lines start with SP or HTAB and belong to the field
 * before them (RFC 3261 §7.3.1). HCOLON allows blanks before the colon.
 */
export function readHeaderField(text: string, pos: number, out: HeaderField): number {
  const len = text.length;
  let lineEnd = text.indexOf("\n", pos);
  if (lineEnd < 0) lineEnd = len;
  let next = lineEnd + 1;
  let valueEnd = lineEnd;
  let folded = false;
  while (next < len) {
    const c = text.charCodeAt(next);
    if (c !== 32 && c !== 9) break;
    folded = true;
    let e = text.indexOf("\n", next);
    if (e < 0) e = len;
    valueEnd = e;
    next = e + 1;
  }
  const colon = text.indexOf(":", pos);
  let nameEnd = colon;
  while (nameEnd > pos && isLws(text.charCodeAt(nameEnd - 1))) nameEnd--;
  out.wellFormed = colon >= 0 && colon < lineEnd && nameEnd > pos && !isLws(text.charCodeAt(pos));
  out.nameStart = pos;
  out.nameEnd = nameEnd;
  let vs = colon + 1;
  while (vs < valueEnd && isLws(text.charCodeAt(vs))) vs++;
  out.valueStart = vs;
  out.valueEnd = trimEnd(text, vs, valueEnd);
  out.folded = folded;
  return next < len ? next : len;
}

/** The field value with each folding (CRLF + blanks) replaced by one SP (RFC 3261 §7.3.1). */
export function headerValue(text: string, f: HeaderField): string {
  const v = text.slice(f.valueStart, f.valueEnd);
  return f.folded ? v.replace(/[ \t]*\r?\n[ \t]+/g, " ") : v;
}
