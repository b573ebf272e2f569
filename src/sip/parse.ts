/**
 * Hot-path SIP parser (ingest: hundreds of thousands of messages per second). Reads the start line
 * and the header section only; the body is located (bodyOffset/bodyLength) but never decoded.
 *
 * Failure policy: Call-ID and CSeq are mandatory in every request and response (RFC 3261 §8.1.1,
 * §8.2.6.2): without them a message cannot be put in a dialog or transaction, so their absence is a
 * failure reason the caller counts. From, To, Via and the rest may be missing: the fields are then
 * undefined (a capture appliance keeps what it can). Malformed header lines are skipped and counted.
 */
import { fail, ok, type Result } from "../core/index.ts";
import { frameSip, headerValue, newHeaderField, parseStartLine, readHeaderField, type HeaderField } from "./framing.ts";
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

const enum H {
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
const COMPACT_IDS: Partial<Record<number, H>> = { 0x69: H.CallId, 0x66: H.From, 0x74: H.To, 0x76: H.Via, 0x6d: H.Contact, 0x63: H.ContentType, 0x6c: H.ContentLength };

/** Usual spelling first (one native compare), then the case-insensitive compare (RFC 3261 §7.3.1). */
const nameIs = (t: string, s: number, canonical: string, lower: string): boolean => t.startsWith(canonical, s) || equalsLower(t, s, lower);

/** Identifies a header name without allocating: dispatch on first letter and length, then compare. */
function identify(t: string, s: number, e: number): H {
  const len = e - s;
  const first = t.charCodeAt(s) | 0x20;
  if (len === 1) return COMPACT_IDS[first] ?? H.Other;
  switch (first) {
    case 0x63: // c
      if (len === 7) return nameIs(t, s, "Call-ID", "call-id") ? H.CallId : nameIs(t, s, "Contact", "contact") ? H.Contact : H.Other;
      if (len === 4) return nameIs(t, s, "CSeq", "cseq") ? H.CSeq : H.Other;
      if (len === 12) return nameIs(t, s, "Content-Type", "content-type") ? H.ContentType : H.Other;
      if (len === 14) return nameIs(t, s, "Content-Length", "content-length") ? H.ContentLength : H.Other;
      return H.Other;
    case 0x66: // f
      return len === 4 && nameIs(t, s, "From", "from") ? H.From : H.Other;
    case 0x74: // t
      return len === 2 && nameIs(t, s, "To", "to") ? H.To : H.Other;
    case 0x76: // v
      return len === 3 && nameIs(t, s, "Via", "via") ? H.Via : H.Other;
    case 0x65: // e
      return len === 7 && nameIs(t, s, "Expires", "expires") ? H.Expires : H.Other;
    case 0x75: // u
      return len === 10 && nameIs(t, s, "User-Agent", "user-agent") ? H.UserAgent : H.Other;
    case 0x73: // s
      return len === 6 && nameIs(t, s, "Server", "server") ? H.Server : H.Other;
    case 0x70: // p
      return len === 19 && nameIs(t, s, "P-Asserted-Identity", "p-asserted-identity") ? H.Pai : H.Other;
    case 0x6d: // m
      return len === 12 && nameIs(t, s, "Max-Forwards", "max-forwards") ? H.MaxForwards : H.Other;
    case 0x72: // r
      return len === 6 && nameIs(t, s, "Reason", "reason") ? H.Reason : H.Other;
    default:
      return H.Other;
  }
}

/** Options turned into lower-case full names once per options object. */
interface CompiledOptions {
  /** Distinct lower-case full header names to watch. */
  keys: string[];
  /** Per key: the configured custom names that map to it (keys of customHeaders). */
  customNames: string[][];
  /** Per key: rank in correlationHeaders, or -1. */
  correlationRank: number[];
}

const compiledCache = new WeakMap<SipParseOptions, CompiledOptions>();

function compileOptions(opts: SipParseOptions): CompiledOptions {
  const keys: string[] = [];
  const customNames: string[][] = [];
  const correlationRank: number[] = [];
  const slot = (name: string): number => {
    const key = headerKey(name);
    let i = keys.indexOf(key);
    if (i < 0) {
      i = keys.push(key) - 1;
      customNames.push([]);
      correlationRank.push(-1);
    }
    return i;
  };
  for (const name of opts.customHeaders ?? []) if (name.trim() !== "") customNames[slot(name)]!.push(name);
  const corr = opts.correlationHeaders ?? ["X-CID"];
  corr.forEach((name, rank) => {
    if (name.trim() === "") return;
    const i = slot(name);
    if (correlationRank[i] === -1) correlationRank[i] = rank;
  });
  return { keys, customNames, correlationRank };
}

const DEFAULT_OPTIONS: SipParseOptions = {};

function compiled(opts: SipParseOptions): CompiledOptions {
  let c = compiledCache.get(opts);
  if (c === undefined) {
    c = compileOptions(opts);
    compiledCache.set(opts, c);
  }
  return c;
}

/** Index of the watched key matching this header name, or -1. */
function watchedIndex(t: string, f: HeaderField, keys: string[]): number {
  const len = f.nameEnd - f.nameStart;
  const compact = len === 1 ? COMPACT_HEADER_FORMS[String.fromCharCode(t.charCodeAt(f.nameStart) | 0x20)]?.toLowerCase() : undefined;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    if (compact !== undefined ? compact === key : key.length === len && equalsLower(t, f.nameStart, key)) return k;
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
  const out: SipAddress = { displayName: undefined, uri: "", scheme: undefined, user: undefined, host: undefined, port: undefined, tag: undefined };
  const paramsStart = parseAddressInto(v.src, v.start, v.end, out);
  out.tag = findParam(v.src, paramsStart, v.end, "tag");
  return out;
}

/** First value of a Contact header; `*` is the wildcard of REGISTER (RFC 3261 §10.2.2). */
function toContact(v: ValueSpan): SipContact {
  const out: SipContact = { displayName: undefined, uri: "", scheme: undefined, user: undefined, host: undefined, port: undefined, tag: undefined, expires: undefined, wildcard: false };
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

const field = newHeaderField();

/** Parses one SIP message. Never throws; every failure is a SipParseReason. */
export function parseSip(payload: Uint8Array, opts: SipParseOptions = DEFAULT_OPTIONS): Result<SipMessage, SipParseReason> {
  const framed = frameSip(payload);
  if (!framed.ok) return framed;
  const { text, bodyOffset } = framed.value;
  const sl = parseStartLine(text);
  if (!sl.ok) return sl;
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
  let pos = sl.value.next;
  while (pos < len) {
    pos = readHeaderField(text, pos, f);
    if (!f.wellFormed) {
      malformedLines++;
      continue;
    }
    headerCount++;
    switch (identify(text, f.nameStart, f.nameEnd)) {
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
    const k = watchedIndex(text, f, keys);
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

  const start = sl.value;
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
    pai: pai === undefined ? undefined : toAddress({ src: pai.src, start: pai.start, end: valueEnd(pai.src, pai.start, pai.end) }),
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
