/**
 * Hot-path SIP parser (ingest: hundreds of thousands of messages per second). Reads the start line
 * and the header section only; the body is located (bodyOffset/bodyLength) but never decoded.
 *
 * Documented choices:
 * - Call-ID and CSeq are mandatory in every request and response (RFC 3261 §8.1.1, §8.2.6.2): without
 *   them a message cannot be put in a dialog or transaction, so their absence ("missing_call_id",
 *   "missing_cseq") or a CSeq that is not `number method` ("bad_cseq") fails. An empty Call-ID counts
 *   as missing. From, To, Via and the rest may be missing: their fields are then undefined.
 * - No empty line after the headers: accepted when the payload ends with a line end (headers, no
 *   body); a payload cut inside a line is "no_header_end". Bare LF line ends are accepted. Leading
 *   CRLFs are skipped (§7.5); a payload of only CRLFs (keep-alive, RFC 5626 §3.5.1) is "empty".
 * - Single-valued headers: the first occurrence wins. Malformed header lines are skipped and counted.
 * - bodyLength is Content-Length when it fits in the payload, else the bytes that arrived.
 * - `method` is the request method, or the CSeq method for responses (see `isRequest`).
 * - `opts` is compiled once per options object: pass the same (frozen config) object each time.
 *
 * Over 400 lines on purpose: one pass over the payload bytes (start line, headers, compact forms,
 * the fields the lake stores) on the ingest hot path; the header dispatch and the byte scanners
 * share the cursor and the per-options compiled tables.
 */
import { fail, ok, type Result } from "../core/index.ts";
import {
  frameSip,
  headerValue,
  nameHash,
  newHeaderField,
  newStartLine,
  parseStartLine,
  readHeaderField,
  type HeaderField,
  type SipFrame,
} from "./framing.ts";
import { COMPACT_HEADER_FORMS, headerKey } from "./headers.ts";
import {
  countValues,
  equalsLower,
  findNumberParam,
  findParam,
  parseAddressInto,
  parseDigits,
  parseHostPortInto,
  parseNumberValue,
  parseUriInto,
  skipLws,
  trimEnd,
  valueEnd,
  type SipUriParts,
} from "./uri.ts";
import type { SipAddress, SipContact, SipMessage, SipParseOptions, SipParseReason, SipVia } from "./types.ts";

enum H {
  Other,
  CallId,
  CSeq,
  From,
  To,
  Via,
  Contact,
  Expires,
  UserAgent,
  Server,
  ContentType,
  ContentLength,
  Pai,
  MaxForwards,
  Reason,
}

/** Compact forms that the hot path extracts (RFC 3261 §7.3.3). */
const COMPACT_IDS: Partial<Record<number, H>> = {
  0x69: H.CallId,
  0x66: H.From,
  0x74: H.To,
  0x76: H.Via,
  0x6d: H.Contact,
  0x63: H.ContentType,
  0x6c: H.ContentLength,
};

const KNOWN_NAMES: [H, string][] = [
  [H.CallId, "Call-ID"],
  [H.CSeq, "CSeq"],
  [H.From, "From"],
  [H.To, "To"],
  [H.Via, "Via"],
  [H.Contact, "Contact"],
  [H.Expires, "Expires"],
  [H.UserAgent, "User-Agent"],
  [H.Server, "Server"],
  [H.ContentType, "Content-Type"],
  [H.ContentLength, "Content-Length"],
  [H.Pai, "P-Asserted-Identity"],
  [H.MaxForwards, "Max-Forwards"],
  [H.Reason, "Reason"],
];

/**
 * Full names by the low bits of their nameHash, so most headers the hot path ignores are ruled out
 * with one array read. A hit is confirmed by comparing the name itself.
 */
const SLOT_MASK = 511;
const SLOTS = new Int8Array(SLOT_MASK + 1);
const slotOf = (hash: number): number => (hash ^ (hash >>> 9)) & SLOT_MASK;
const CANONICAL: string[] = [];
const LOWER: string[] = [];
for (const [id, name] of KNOWN_NAMES) {
  const slot = slotOf(nameHash(name));
  // Broken invariant only if the table above changes: pick another mask then.
  if (SLOTS[slot] !== 0) throw new Error(`sip: header slot collision for ${name}`);
  SLOTS[slot] = id;
  CANONICAL[id] = name;
  LOWER[id] = name.toLowerCase();
}

/**
 * Identifies a header name without allocating. The usual spelling is tried first (one native
 * compare), then the case-insensitive compare (names are case-insensitive, RFC 3261 §7.3.1).
 */
function identify(t: string, f: HeaderField): H {
  const len = f.nameEnd - f.nameStart;
  if (len === 1) return COMPACT_IDS[t.charCodeAt(f.nameStart) | 0x20] ?? H.Other;
  const id = SLOTS[slotOf(f.nameHash)]!;
  if (id === H.Other) return H.Other;
  const canonical = CANONICAL[id]!;
  if (canonical.length !== len) return H.Other;
  return t.startsWith(canonical, f.nameStart) || equalsLower(t, f.nameStart, LOWER[id]!) ? id : H.Other;
}

/** Options turned into lower-case full names once per options object. */
interface CompiledOptions {
  /** Distinct lower-case full header names to watch. */
  keys: string[];
  /** Per key: nameHash(key), compared before the names themselves. */
  hashes: number[];
  /** Per key: the configured custom names that map to it (keys of customHeaders). */
  customNames: string[][];
  /** Per key: rank in correlationHeaders, or -1. */
  correlationRank: number[];
}

const compiledCache = new WeakMap<SipParseOptions, CompiledOptions>();

function compileOptions(opts: SipParseOptions): CompiledOptions {
  const c: CompiledOptions = { keys: [], hashes: [], customNames: [], correlationRank: [] };
  const slot = (name: string): number => {
    const key = headerKey(name);
    let i = c.keys.indexOf(key);
    if (i < 0) {
      i = c.keys.push(key) - 1;
      c.hashes.push(nameHash(key));
      c.customNames.push([]);
      c.correlationRank.push(-1);
    }
    return i;
  };
  for (const name of opts.customHeaders ?? []) if (name.trim() !== "") c.customNames[slot(name)]!.push(name);
  (opts.correlationHeaders ?? ["X-CID"]).forEach((name, rank) => {
    if (name.trim() === "") return;
    const i = slot(name);
    if (c.correlationRank[i] === -1) c.correlationRank[i] = rank;
  });
  return c;
}

const DEFAULT_OPTIONS: SipParseOptions = {};

/** Compiled form of `opts`, cached per options object (callers pass their frozen config slice). */
function compiled(opts: SipParseOptions): CompiledOptions {
  let c = compiledCache.get(opts);
  if (c === undefined) {
    c = compileOptions(opts);
    compiledCache.set(opts, c);
  }
  return c;
}

/** Lower-case full name of each compact form, by character code. */
const COMPACT_KEYS: Partial<Record<number, string>> = {};
for (const [letter, full] of Object.entries(COMPACT_HEADER_FORMS))
  COMPACT_KEYS[letter.charCodeAt(0)] = full.toLowerCase();

/** Index of the watched key matching this header name, or -1. */
function watchedIndex(t: string, f: HeaderField, c: CompiledOptions): number {
  const len = f.nameEnd - f.nameStart;
  const compact = len === 1 ? COMPACT_KEYS[t.charCodeAt(f.nameStart) | 0x20] : undefined;
  for (let k = 0; k < c.keys.length; k++) {
    const key = c.keys[k]!;
    if (
      compact !== undefined
        ? compact === key
        : c.hashes[k] === f.nameHash && key.length === len && equalsLower(t, f.nameStart, key)
    )
      return k;
  }
  return -1;
}

const EMPTY_CUSTOM: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Where a structured header value sits: in the header text itself, or (rare, folded values) in the
 * unfolded copy. Parsing in place avoids one intermediate string per header.
 */
interface ValueSpan {
  src: string;
  start: number;
  end: number;
}

function spanOf(text: string, f: HeaderField): ValueSpan {
  if (!f.folded) return { src: text, start: f.valueStart, end: f.valueEnd };
  const v = headerValue(text, f);
  return { src: v, start: 0, end: v.length };
}

function toAddress(v: ValueSpan): SipAddress {
  const out: SipAddress = {
    displayName: undefined,
    uri: "",
    scheme: undefined,
    user: undefined,
    host: undefined,
    port: undefined,
    tag: undefined,
  };
  const paramsStart = parseAddressInto(v.src, v.start, v.end, out);
  out.tag = findParam(v.src, paramsStart, v.end, "tag");
  return out;
}

/** First value of a Contact header; `*` is the wildcard of REGISTER (RFC 3261 §10.2.2). */
function toContact(v: ValueSpan): SipContact {
  const out: SipContact = {
    displayName: undefined,
    uri: "",
    scheme: undefined,
    user: undefined,
    host: undefined,
    port: undefined,
    tag: undefined,
    expires: undefined,
    wildcard: false,
  };
  const s = v.src;
  const end = valueEnd(s, v.start, v.end);
  const start = skipLws(s, v.start, end);
  if (s.charCodeAt(start) === 42 /* * */ && trimEnd(s, start, end) === start + 1) {
    out.uri = "*";
    out.wildcard = true;
    return out;
  }
  const paramsStart = parseAddressInto(s, start, end, out);
  out.expires = findNumberParam(s, paramsStart, end, "expires");
  return out;
}

const TRANSPORTS = ["UDP", "TCP", "TLS", "SCTP", "WS", "WSS", "TLS-SCTP"];
const TRANSPORTS_LOWER = TRANSPORTS.map((t) => t.toLowerCase());

/** Upper-case transport token; the registered ones (RFC 3261 §20.42, RFC 7118) without a new string. */
function transportAt(s: string, start: number, end: number): string {
  for (let k = 0; k < TRANSPORTS.length; k++) {
    const t = TRANSPORTS_LOWER[k]!;
    if (t.length === end - start && equalsLower(s, start, t)) return TRANSPORTS[k]!;
  }
  return s.slice(start, end).toUpperCase();
}

/** Top Via value: `SIP / 2.0 / transport sent-by *(;param)` (RFC 3261 §20.42, LWS allowed around '/'). */
function toVia(v: ValueSpan): SipVia | undefined {
  const s = v.src;
  const end = valueEnd(s, v.start, v.end);
  let slashes = 0;
  let i = v.start;
  while (i < end && slashes < 2) if (s.charCodeAt(i++) === 47) slashes++;
  if (slashes < 2) return undefined;
  const ts = skipLws(s, i, end);
  let te = ts;
  while (te < end && s.charCodeAt(te) > 32 && s.charCodeAt(te) !== 59) te++;
  const out: SipVia = { transport: transportAt(s, ts, te), host: undefined, port: undefined, branch: undefined };
  const paramsStart = parseHostPortInto(s, skipLws(s, te, end), end, out);
  out.branch = findParam(s, paramsStart, end, "branch");
  return out;
}

/** CSeq = 1*DIGIT LWS Method (RFC 3261 §20.16); the number must fit 32 bits (§8.1.1.5: < 2**31 when sent). */
function splitCSeq(s: string, start: number, end: number): { seq: number; method: string } | undefined {
  let i = start;
  while (i < end && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  const seq = parseDigits(s, start, i);
  const ms = skipLws(s, i, end);
  if (seq === undefined || ms === i || ms >= end) return undefined;
  let me = ms;
  while (me < end && s.charCodeAt(me) > 32) me++;
  if (skipLws(s, me, end) !== end) return undefined;
  return { seq, method: s.slice(ms, me) };
}

/** Decimal header value (Expires, Max-Forwards, Content-Length); undefined when not a number. */
const numberAt = (text: string, f: HeaderField): number | undefined =>
  f.folded ? parseNumberValue(headerValue(text, f)) : parseDigits(text, f.valueStart, f.valueEnd);

// Scratch records reused by every call (parseSip is synchronous and not re-entrant), so the hot
// path allocates only what it returns.
const field = newHeaderField();
const frameScratch: SipFrame = { text: "", bodyOffset: 0 };
const startScratch = newStartLine();

/** Parses one SIP message. Never throws; every failure is a SipParseReason. */
export function parseSip(
  payload: Uint8Array,
  opts: SipParseOptions = DEFAULT_OPTIONS,
): Result<SipMessage, SipParseReason> {
  const frame = frameScratch;
  const frameFailure = frameSip(payload, frame);
  if (frameFailure !== undefined) return fail(frameFailure);
  const text = frame.text;
  const bodyOffset = frame.bodyOffset;
  const start = startScratch;
  const startFailure = parseStartLine(text, start);
  if (startFailure !== undefined) return fail(startFailure);
  const watch = compiled(opts);
  const keys = watch.keys;

  let callId: string | undefined;
  let cseq: ValueSpan | undefined;
  let from: ValueSpan | undefined;
  let to: ValueSpan | undefined;
  let via: ValueSpan | undefined;
  let viaCount = 0;
  let contact: ValueSpan | undefined;
  let pai: ValueSpan | undefined;
  let expires: number | undefined;
  let hasExpires = false;
  let userAgent: string | undefined;
  let server: string | undefined;
  let contentType: string | undefined;
  let contentLength: number | undefined;
  let hasContentLength = false;
  let maxForwards: number | undefined;
  let hasMaxForwards = false;
  let reason: string | undefined;
  let corrRank = Number.MAX_SAFE_INTEGER;
  let correlationId: string | undefined;
  let custom: Record<string, string> | undefined;
  let headerCount = 0;
  let malformedLines = 0;

  const f = field;
  const len = text.length;
  let pos = start.next;
  while (pos < len) {
    pos = readHeaderField(text, pos, f);
    if (!f.wellFormed) {
      malformedLines++;
      continue;
    }
    headerCount++;
    switch (identify(text, f)) {
      case H.CallId:
        callId ??= headerValue(text, f);
        break;
      case H.CSeq:
        cseq ??= spanOf(text, f);
        break;
      case H.From:
        from ??= spanOf(text, f);
        break;
      case H.To:
        to ??= spanOf(text, f);
        break;
      case H.Via: {
        const v = spanOf(text, f);
        via ??= v;
        viaCount += countValues(v.src, v.start, v.end);
        break;
      }
      case H.Contact:
        contact ??= spanOf(text, f);
        break;
      case H.Pai:
        pai ??= spanOf(text, f);
        break;
      case H.Expires:
        if (!hasExpires) expires = numberAt(text, f);
        hasExpires = true;
        break;
      case H.UserAgent:
        userAgent ??= headerValue(text, f);
        break;
      case H.Server:
        server ??= headerValue(text, f);
        break;
      case H.ContentType:
        contentType ??= headerValue(text, f);
        break;
      case H.ContentLength:
        if (!hasContentLength) contentLength = numberAt(text, f);
        hasContentLength = true;
        break;
      case H.MaxForwards:
        if (!hasMaxForwards) maxForwards = numberAt(text, f);
        hasMaxForwards = true;
        break;
      case H.Reason:
        reason ??= headerValue(text, f);
        break;
      case H.Other:
        break;
    }
    if (keys.length === 0) continue;
    const k = watchedIndex(text, f, watch);
    if (k < 0) continue;
    const rank = watch.correlationRank[k]!;
    if (rank >= 0 && rank < corrRank) {
      corrRank = rank;
      correlationId = headerValue(text, f);
    }
    for (const name of watch.customNames[k]!) {
      custom ??= {};
      const v = headerValue(text, f);
      const prev = custom[name];
      custom[name] = prev === undefined ? v : `${prev}, ${v}`;
    }
  }

  if (callId === undefined || callId === "") return fail("missing_call_id");
  if (cseq === undefined) return fail("missing_cseq");
  const cs = splitCSeq(cseq.src, cseq.start, cseq.end);
  if (cs === undefined) return fail("bad_cseq", cseq.src.slice(cseq.start, cseq.end));

  const ruri: SipUriParts = { scheme: undefined, user: undefined, host: undefined, port: undefined };
  if (start.isRequest) parseUriInto(text, start.uriStart, start.uriEnd, ruri);
  const available = payload.length - bodyOffset;
  return ok({
    isRequest: start.isRequest,
    method: start.isRequest ? start.method : cs.method,
    statusCode: start.statusCode,
    reasonPhrase: start.reasonPhrase,
    requestUri: start.requestUri,
    ruriUser: ruri.user,
    ruriHost: ruri.host,
    callId,
    cseq: cs.seq,
    cseqMethod: cs.method,
    from: from === undefined ? undefined : toAddress(from),
    to: to === undefined ? undefined : toAddress(to),
    pai:
      pai === undefined
        ? undefined
        : toAddress({ src: pai.src, start: pai.start, end: valueEnd(pai.src, pai.start, pai.end) }),
    contact: contact === undefined ? undefined : toContact(contact),
    via: via === undefined ? undefined : toVia(via),
    viaCount,
    expires,
    userAgent: userAgent ?? server,
    contentType,
    contentLength,
    maxForwards,
    reason,
    correlationId,
    customHeaders: custom ?? EMPTY_CUSTOM,
    headerCount,
    malformedLines,
    bodyOffset,
    // UDP (RFC 3261 §18.3): bytes beyond Content-Length are ignored; a larger Content-Length than the
    // payload holds keeps what arrived (a capture shows the truncated message rather than dropping it).
    bodyLength: contentLength !== undefined && contentLength < available ? contentLength : available,
  });
}
