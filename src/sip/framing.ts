/**
 * Message framing shared by the hot-path parser and the decoded view: find the end of the header
 * section on bytes, decode only the header block, split the start line, walk header fields.
 */
import { isLws, parseDigits, trimEnd } from "./uri.ts";

const LF = 10;
const CR = 13;
const LF_CRLF = new Uint8Array([LF, CR, LF]);
const LF_LF = new Uint8Array([LF, LF]);
const utf8 = new TextDecoder("utf-8");
// Buffer#indexOf (a native memmem) and Buffer#toString accept any Uint8Array as `this` in Bun and
// Node; toString(start, end) decodes without creating a subarray view first (cheaper per message).
const byteIndexOf = Buffer.prototype.indexOf;
const bufferToString = Buffer.prototype.toString;

/** UTF-8 text of payload[start, end): invalid sequences become U+FFFD, never an exception. */
export const decodeUtf8 = (payload: Uint8Array, start: number, end: number): string =>
  bufferToString.call(payload, "utf8", start, end);

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
export type SipFrameReason = "empty" | "not_sip" | "no_header_end";

/** Fills `out` and returns undefined, or returns why there is no header section. */
export function frameSip(payload: Uint8Array, out: SipFrame): SipFrameReason | undefined {
  const n = payload.length;
  let start = 0;
  while (start < n && (payload[start] === CR || payload[start] === LF)) start++;
  if (start >= n) return "empty";
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
    return looksLikeSip(payload, start) ? "no_header_end" : "not_sip";
  }
  out.text = decodeUtf8(payload, start, headerEnd);
  out.bodyOffset = bodyOffset;
  return undefined;
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
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 45 ||
    c === 46 ||
    c === 33 ||
    c === 37 ||
    c === 42 ||
    c === 95 ||
    c === 43 ||
    c === 96 ||
    c === 39 ||
    c === 126
  );
}

/**
 * Request-Line (RFC 3261 §7.1: Method SP Request-URI SP SIP-Version) or Status-Line (§7.2:
 * SIP-Version SP Status-Code SP Reason-Phrase). Only SIP/2.0 is accepted; the version token is
 * case-insensitive (§7.1). A first line without any "SIP/" is "not_sip".
 */
export function parseStartLine(text: string, out: StartLine): "not_sip" | "bad_start_line" | undefined {
  let lineEnd = text.indexOf("\n");
  const next = lineEnd < 0 ? text.length : lineEnd + 1;
  if (lineEnd < 0) lineEnd = text.length;
  const end = trimEnd(text, 0, lineEnd);
  if (isSipVersion(text, 0)) {
    // "SIP/2.0" SP 3DIGIT [SP Reason-Phrase]; a missing reason phrase is tolerated.
    if (text.charCodeAt(7) !== 32) return "bad_start_line";
    const code = parseDigits(text, 8, 11);
    if (code === undefined || code < 100 || code > 699) return "bad_start_line";
    if (end > 11 && text.charCodeAt(11) !== 32) return "bad_start_line";
    const reasonPhrase = end > 12 ? text.slice(12, end) : "";
    return setStartLine(out, false, "", undefined, 0, 0, code, reasonPhrase, next);
  }
  let sp1 = 0;
  while (sp1 < end && isTokenChar(text.charCodeAt(sp1))) sp1++;
  const sp2 = text.lastIndexOf(" ", end - 1);
  const versionOk = sp2 > 0 && end - sp2 - 1 === 7 && isSipVersion(text, sp2 + 1);
  if (!versionOk) {
    const sip = text.indexOf("SIP/");
    return sip >= 0 && sip < end ? "bad_start_line" : "not_sip";
  }
  // Method must be a non-empty token followed by exactly one SP, and the URI must hold no blank.
  if (sp1 === 0 || text.charCodeAt(sp1) !== 32 || sp2 <= sp1 + 1) return "bad_start_line";
  const uriSpace = text.indexOf(" ", sp1 + 1);
  if (uriSpace !== sp2) return "bad_start_line";
  return setStartLine(
    out,
    true,
    text.slice(0, sp1),
    text.slice(sp1 + 1, sp2),
    sp1 + 1,
    sp2,
    undefined,
    undefined,
    next,
  );
}

export const newStartLine = (): StartLine => ({
  isRequest: false,
  method: "",
  requestUri: undefined,
  uriStart: 0,
  uriEnd: 0,
  statusCode: undefined,
  reasonPhrase: undefined,
  next: 0,
});

function setStartLine(
  out: StartLine,
  isRequest: boolean,
  method: string,
  requestUri: string | undefined,
  uriStart: number,
  uriEnd: number,
  statusCode: number | undefined,
  reasonPhrase: string | undefined,
  next: number,
): undefined {
  out.isRequest = isRequest;
  out.method = method;
  out.requestUri = requestUri;
  out.uriStart = uriStart;
  out.uriEnd = uriEnd;
  out.statusCode = statusCode;
  out.reasonPhrase = reasonPhrase;
  out.next = next;
  return undefined;
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
  /** nameHash() of the name, computed during the scan so callers can dispatch on an integer. */
  nameHash: number;
}

/** Case-insensitive hash of a header name (ASCII letters folded to lower case). */
export function nameHash(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + (name.charCodeAt(i) | 0x20)) | 0;
  return h;
}

export const newHeaderField = (): HeaderField => ({
  nameStart: 0,
  nameEnd: 0,
  valueStart: 0,
  valueEnd: 0,
  folded: false,
  wellFormed: false,
  nameHash: 0,
});

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
  // Header names are short: a scan beats a native search call here.
  let nameEnd = pos;
  let c = text.charCodeAt(nameEnd);
  let h = 0;
  while (nameEnd < lineEnd && c !== 58 && c !== 32 && c !== 9) {
    h = (Math.imul(h, 31) + (c | 0x20)) | 0;
    c = text.charCodeAt(++nameEnd);
  }
  out.nameHash = h;
  let colon = nameEnd;
  while (colon < lineEnd && (c === 32 || c === 9)) c = text.charCodeAt(++colon);
  out.wellFormed = c === 58 && colon < lineEnd && nameEnd > pos;
  out.nameStart = pos;
  out.nameEnd = nameEnd;
  let vs = colon + 1;
  while (vs < valueEnd && isLws(text.charCodeAt(vs))) vs++;
  out.valueStart = vs;
  out.valueEnd = trimEnd(text, vs, valueEnd);
  out.folded = folded;
  return Math.min(next, len);
}

/** The field value with each folding (CRLF + blanks) replaced by one SP (RFC 3261 §7.3.1). */
export function headerValue(text: string, f: HeaderField): string {
  const v = text.slice(f.valueStart, f.valueEnd);
  return f.folded ? v.replace(/[ \t]*\r?\n[ \t]+/g, " ") : v;
}
