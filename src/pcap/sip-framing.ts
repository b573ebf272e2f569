/**
 * Finding SIP messages in bytes without parsing them: the start line (RFC 3261 §7.1 Request-Line,
 * §7.2 Status-Line) tells SIP from RTP, STUN and the rest, and on a stream the message ends
 * Content-Length bytes after the empty line that ends the headers (§18.3; "l" is its compact form,
 * §7.3.3). CRLFs between messages are keep-alives (RFC 5626 §3.5.1) and are skipped.
 * Every function looks at `buf` from `start` to `buf.length`.
 */

const LF = 10;
const CR = 13;
const SP = 32;
/** Longer start lines are not SIP in practice; the cap bounds the search on non-SIP streams. */
export const MAX_START_LINE = 8192;
export const MAX_HEADER_BYTES = 65536;
const MAX_METHOD = 32;

/** RFC 3261 §25.1 token characters. */
const TOKEN = new Uint8Array(128);
for (const c of "!%'*+-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_`abcdefghijklmnopqrstuvwxyz~") TOKEN[c.charCodeAt(0)] = 1;

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** "SIP/2.0", compared case-insensitively (ABNF literals, RFC 5234 §2.3). */
function isSipVersion(buf: Uint8Array, at: number): boolean {
  return (
    ((buf[at] ?? 0) | 0x20) === 0x73 &&
    ((buf[at + 1] ?? 0) | 0x20) === 0x69 &&
    ((buf[at + 2] ?? 0) | 0x20) === 0x70 &&
    buf[at + 3] === 0x2f &&
    buf[at + 4] === 0x32 &&
    buf[at + 5] === 0x2e &&
    buf[at + 6] === 0x30
  );
}

const SIP_VERSION_SP = "sip/2.0 ";

/** The bytes from `start` to the end are a prefix of "SIP/2.0 " or start with it (a Status-Line in the making). */
function couldBeSipVersion(buf: Uint8Array, start: number): boolean {
  const n = Math.min(buf.length - start, SIP_VERSION_SP.length);
  for (let k = 0; k < n; k++) {
    const c = buf[start + k] ?? 0;
    if ((k < 3 ? c | 0x20 : c) !== SIP_VERSION_SP.charCodeAt(k)) return false;
  }
  return true;
}

export type StartLineCheck = "sip" | "not_sip" | "incomplete";

/** Is the line at `start` a SIP Request-Line or Status-Line? "incomplete" when it may still become one. */
export function checkStartLine(buf: Uint8Array, start: number): StartLineCheck {
  const first = buf[start];
  if (first === undefined) return "incomplete";
  if (!isLetter(first)) return "not_sip";
  let lineEnd = buf.indexOf(LF, start);
  if (lineEnd < 0) {
    // Reject early what can never be a start line, so a non-SIP stream is not buffered.
    if (buf.length - start >= MAX_START_LINE) return "not_sip";
    if (couldBeSipVersion(buf, start)) return "incomplete";
    for (let i = start; i < buf.length && i < start + MAX_METHOD + 1; i++) {
      const c = buf[i] ?? 0;
      if (c === SP) return "incomplete";
      if (c >= 128 || TOKEN[c] !== 1) return "not_sip";
    }
    return buf.length - start > MAX_METHOD ? "not_sip" : "incomplete";
  }
  if (lineEnd - start > MAX_START_LINE) return "not_sip";
  if (buf[lineEnd - 1] === CR) lineEnd--;
  // Status-Line: SIP-Version SP Status-Code SP Reason-Phrase (the reason may be empty).
  if (isSipVersion(buf, start) && buf[start + 7] === SP) {
    const ok = isDigit(buf[start + 8] ?? 0) && isDigit(buf[start + 9] ?? 0) && isDigit(buf[start + 10] ?? 0);
    return ok && (lineEnd === start + 11 || buf[start + 11] === SP) ? "sip" : "not_sip";
  }
  // Request-Line: Method SP Request-URI SP SIP-Version.
  let i = start;
  while (i < lineEnd && (buf[i] ?? 0) < 128 && TOKEN[buf[i] ?? 0] === 1) i++;
  if (i === start || i - start > MAX_METHOD || buf[i] !== SP) return "not_sip";
  const uriStart = i + 1;
  const versionAt = lineEnd - 7;
  if (versionAt - 1 <= uriStart || buf[versionAt - 1] !== SP || !isSipVersion(buf, versionAt)) return "not_sip";
  return buf.indexOf(SP, uriStart) === versionAt - 1 ? "sip" : "not_sip";
}

/** Skips CR and LF bytes (keep-alives and stray line ends before a start line). */
export function skipLineBreaks(buf: Uint8Array, start: number): number {
  let i = start;
  while (i < buf.length && (buf[i] === CR || buf[i] === LF)) i++;
  return i;
}

/** Offset of the start line in a datagram (after leading CRLFs, RFC 3261 §7.5), or -1 if it is not SIP. */
export function sipStartInDatagram(payload: Uint8Array): number {
  const at = skipLineBreaks(payload, 0);
  return checkStartLine(payload, at) === "sip" ? at : -1;
}

export type FrameResult =
  | { kind: "message"; length: number }
  | { kind: "incomplete" }
  | { kind: "not_sip" }
  | { kind: "too_large"; length: number };

const CONTENT_LENGTH = new TextEncoder().encode("content-length");

/** If the header line at `at` is Content-Length (or compact "l"), the offset after its colon; else -1. */
function contentLengthValueAt(buf: Uint8Array, at: number): number {
  let i = at;
  if (((buf[i] ?? 0) | 0x20) === 0x6c && (buf[i + 1] === 0x3a || buf[i + 1] === SP || buf[i + 1] === 9)) {
    i += 1;
  } else {
    for (let k = 0; k < CONTENT_LENGTH.length; k++, i++) if (((buf[i] ?? 0) | 0x20) !== CONTENT_LENGTH[k]) return -1;
  }
  while (buf[i] === SP || buf[i] === 9) i++;
  return buf[i] === 0x3a ? i + 1 : -1;
}

function parseDecimal(buf: Uint8Array, at: number): number {
  let i = at;
  while (buf[i] === SP || buf[i] === 9) i++;
  let v = 0;
  let digits = 0;
  for (; isDigit(buf[i] ?? 0) && digits < 10; i++, digits++) v = v * 10 + ((buf[i] ?? 0) - 48);
  return v;
}

/**
 * End of the header block starting at `start` (just after the empty line that ends it), -1 while it
 * may still arrive, -2 when it is longer than MAX_HEADER_BYTES. Bare LF line ends are tolerated.
 */
export function headerBlockEnd(buf: Uint8Array, start: number): number {
  for (let from = start; ; ) {
    const nl = buf.indexOf(LF, from);
    if (nl < 0) return buf.length - start > MAX_HEADER_BYTES ? -2 : -1;
    const next = nl + 1;
    if (buf[next] === LF) return next + 1;
    if (buf[next] === CR && buf[next + 1] === LF) return next + 2;
    if (next >= buf.length || (buf[next] === CR && next + 1 >= buf.length)) return -1;
    if (next - start > MAX_HEADER_BYTES) return -2;
    from = next;
  }
}

/**
 * Length of the SIP message at `start` on a stream (RFC 3261 §18.3): headers up to the empty line,
 * then Content-Length bytes of body (a missing Content-Length counts as 0).
 */
export function frameSipMessage(buf: Uint8Array, start: number, maxBytes: number): FrameResult {
  const line = checkStartLine(buf, start);
  if (line !== "sip") return { kind: line };
  const end = headerBlockEnd(buf, start);
  if (end === -1) return { kind: "incomplete" };
  if (end === -2) return { kind: "not_sip" };
  let contentLength = 0;
  for (let from = start; ; ) {
    const next = buf.indexOf(LF, from) + 1;
    if (next <= 0 || next >= end) break;
    const valueAt = contentLengthValueAt(buf, next);
    if (valueAt >= 0) contentLength = parseDecimal(buf, valueAt);
    from = next;
  }
  const length = end - start + contentLength;
  if (length > maxBytes) return { kind: "too_large", length };
  return buf.length - start >= length ? { kind: "message", length } : { kind: "incomplete" };
}

export type ResyncResult = { found: boolean; at: number };

/**
 * After a gap or non-SIP bytes: the next line start holding a SIP start line (found), or where to
 * keep bytes from because the last line may still become one (not found).
 */
export function findStartLine(buf: Uint8Array, start: number): ResyncResult {
  for (let at = start; at < buf.length; ) {
    const check = checkStartLine(buf, at);
    if (check === "sip") return { found: true, at };
    if (check === "incomplete") return { found: false, at };
    const nl = buf.indexOf(LF, at);
    if (nl < 0) return { found: false, at: buf.length };
    at = nl + 1;
  }
  return { found: false, at: buf.length };
}
