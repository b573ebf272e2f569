/**
 * Pieces of SIP header values: URIs (RFC 3261 §19.1, tel: RFC 3966), name-addr / addr-spec
 * (§20.10), generic parameters and comma-separated values (§7.3.1). Nothing here throws.
 *
 * Everything works on indices into the one decoded header string and slices only the final field
 * values: in JavaScriptCore a slice is a cheap view, but scanning a fresh slice first flattens it
 * into a copy (measured ~35 ns each), which mattered at hundreds of thousands of messages per second.
 */

const SP = 32;
const HTAB = 9;
const DQUOTE = 34;
const BACKSLASH = 92;

export const isLws = (c: number): boolean => c === SP || c === HTAB || c === 13 || c === 10;

export function skipLws(s: string, i: number, end: number): number {
  while (i < end && isLws(s.charCodeAt(i))) i++;
  return i;
}

export function trimEnd(s: string, start: number, end: number): number {
  while (end > start && isLws(s.charCodeAt(end - 1))) end--;
  return end;
}

/** Index just after the closing quote of the quoted-string opening at `i` (quoted-pair aware), or `end`. */
export function skipQuoted(s: string, i: number, end: number): number {
  const close = s.indexOf('"', i + 1);
  const bs = s.indexOf("\\", i + 1);
  if (close >= 0 && close < end && (bs < 0 || bs > close)) return close + 1;
  for (i++; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === DQUOTE) return i + 1;
  }
  return end;
}

/** Case-insensitive compare of `s[at, at+lower.length)` with an already lower-case ASCII word. */
export function equalsLower(s: string, at: number, lower: string): boolean {
  const n = lower.length;
  for (let k = 0; k < n; k++) {
    let c = s.charCodeAt(at + k);
    if (c >= 65 && c <= 90) c |= 0x20;
    if (c !== lower.charCodeAt(k)) return false;
  }
  return true;
}

/** Decimal digits only (no sign, no blanks); undefined when empty, not numeric or above `max`. */
export function parseDigits(s: string, start: number, end: number, max = 0xffffffff): number | undefined {
  if (start >= end || end - start > 10) return undefined;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return undefined;
    n = n * 10 + d;
  }
  return n <= max ? n : undefined;
}

/** Trimmed decimal header value (Expires, Max-Forwards, Content-Length). */
export function parseNumberValue(s: string): number | undefined {
  const start = skipLws(s, 0, s.length);
  return parseDigits(s, start, trimEnd(s, start, s.length));
}

/**
 * End of the value starting at `i` in a comma-separated header (Via, Contact): the next comma outside
 * quoted strings and <...>, or `end`. Most values hold no comma: one native search settles it.
 */
export function valueEnd(s: string, i: number, end: number): number {
  const firstComma = s.indexOf(",", i);
  if (firstComma < 0 || firstComma >= end) return end;
  let angle = false;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c === DQUOTE) {
      i = skipQuoted(s, i, end);
      continue;
    }
    if (c === 60 /* < */) angle = true;
    else if (c === 62 /* > */) angle = false;
    else if (c === 44 /* , */ && !angle) return i;
    i++;
  }
  return end;
}

/** Number of non-empty comma-separated values in `s[start, end)` (RFC 3261 §7.3.1). */
export function countValues(s: string, start: number, end: number): number {
  const firstComma = s.indexOf(",", start);
  if (firstComma < 0 || firstComma >= end) return skipLws(s, start, end) < end ? 1 : 0;
  let count = 0;
  let i = start;
  while (i <= end) {
    const vs = skipLws(s, i, end);
    const ve = valueEnd(s, vs, end);
    if (trimEnd(s, vs, ve) > vs) count++;
    i = ve + 1;
  }
  return count;
}

/**
 * Text of `s[start, end)`: a quoted-string loses its quotes and quoted-pair backslashes (RFC 3261
 * §25.1), anything else is sliced as is. One slice unless there are escapes.
 */
export function textAt(s: string, start: number, end: number): string {
  if (end - start < 2 || s.charCodeAt(start) !== DQUOTE) return s.slice(start, end);
  const innerEnd = s.charCodeAt(end - 1) === DQUOTE ? end - 1 : end;
  const inner = s.slice(start + 1, innerEnd);
  const bs = s.indexOf("\\", start + 1);
  return bs >= 0 && bs < innerEnd ? inner.replace(/\\(.)/g, "$1") : inner;
}

/**
 * Index where the value of the `;name[=value]` parameter starts in `s[from, end)`, or -1 when the
 * parameter is absent. `lowerName` must be lower case (parameter names are case-insensitive,
 * RFC 3261 §7.3.1). For a flag parameter the value is empty. Read the value with paramText or
 * paramValueEnd.
 */
export function findParamAt(s: string, from: number, end: number, lowerName: string): number {
  let i = from;
  let quote = s.indexOf('"', from);
  while (i < end) {
    const semi = s.indexOf(";", i);
    if (semi < 0 || semi >= end) return -1;
    if (quote >= 0 && quote < semi) {
      // A ';' inside a quoted parameter value does not start a parameter.
      i = skipQuoted(s, quote, end);
      quote = s.indexOf('"', i);
      continue;
    }
    const nameStart = skipLws(s, semi + 1, end);
    let j = nameStart;
    while (j < end) {
      const d = s.charCodeAt(j);
      if (d === 61 /* = */ || d === 59 || isLws(d)) break;
      j++;
    }
    i = j;
    if (j - nameStart !== lowerName.length || !equalsLower(s, nameStart, lowerName)) continue;
    j = skipLws(s, j, end);
    return j < end && s.charCodeAt(j) === 61 ? skipLws(s, j + 1, end) : j;
  }
  return -1;
}

/** End (exclusive, trimmed) of the parameter value starting at `start`. */
export function paramValueEnd(s: string, start: number, end: number): number {
  if (start < end && s.charCodeAt(start) === DQUOTE) return skipQuoted(s, start, end);
  let k = s.indexOf(";", start);
  if (k < 0 || k > end) k = end;
  return trimEnd(s, start, k);
}

/** Unquoted value of a header parameter: "" for a flag, undefined when absent. */
export function findParam(s: string, from: number, end: number, lowerName: string): string | undefined {
  const vs = findParamAt(s, from, end, lowerName);
  return vs < 0 ? undefined : textAt(s, vs, paramValueEnd(s, vs, end));
}

/** Numeric header parameter (`expires`, `rport`): undefined when absent or not a number. */
export function findNumberParam(s: string, from: number, end: number, lowerName: string): number | undefined {
  const vs = findParamAt(s, from, end, lowerName);
  return vs < 0 ? undefined : parseDigits(s, vs, paramValueEnd(s, vs, end));
}

/** Parts of a URI that the product uses. Host is given without IPv6 brackets. */
export interface SipUriParts {
  /** Lower-case scheme (`sip`, `sips`, `tel`, ...), undefined when the text has none (e.g. `*`). */
  scheme: string | undefined;
  /** User part as sent (escapes kept); for tel: the number with its visual separators. */
  user: string | undefined;
  host: string | undefined;
  port: number | undefined;
}

const HOST_SCHEMES = new Set(["sip", "sips", "im", "pres"]);

/** Lower-case scheme of `s[start, colon)`; sip, sips and tel without allocating. */
function schemeOf(s: string, start: number, colon: number): string | undefined {
  const n = colon - start;
  if (n === 3 || n === 4) {
    const a = s.charCodeAt(start) | 0x20;
    const b = s.charCodeAt(start + 1) | 0x20;
    const c = s.charCodeAt(start + 2) | 0x20;
    if (a === 0x73 && b === 0x69 && c === 0x70) {
      if (n === 3) return "sip";
      if ((s.charCodeAt(start + 3) | 0x20) === 0x73) return "sips";
    } else if (n === 3 && a === 0x74 && b === 0x65 && c === 0x6c) return "tel";
  }
  if (n <= 0) return undefined;
  const scheme = s.slice(start, colon).toLowerCase();
  return /^[a-z][a-z0-9+.-]*$/.test(scheme) ? scheme : undefined;
}

/**
 * Fills `out` from the sip/sips/tel URI in `s[start, end)` (RFC 3261 §19.1.1, RFC 3966); other
 * schemes only get `scheme`. Works in place so the hot path needs no intermediate strings.
 */
export function parseUriInto(s: string, start: number, end: number, out: SipUriParts): void {
  let colon = start;
  while (colon < end && s.charCodeAt(colon) !== 58) colon++;
  const scheme = colon < end ? schemeOf(s, start, colon) : undefined;
  out.scheme = scheme;
  out.user = undefined;
  out.host = undefined;
  out.port = undefined;
  if (scheme === undefined) return;
  let i = colon + 1;
  if (scheme === "tel") {
    // RFC 3966: telephone-subscriber; parameters (phone-context, ext, isub) follow ';'.
    let e = i;
    while (e < end && s.charCodeAt(e) !== 59 && s.charCodeAt(e) !== 63) e++;
    if (e > i) out.user = s.slice(i, e);
    return;
  }
  if (scheme !== "sip" && scheme !== "sips" && !HOST_SCHEMES.has(scheme)) return;
  const at = s.indexOf("@", i);
  if (at >= 0 && at < end) {
    // userinfo = user [":" password] "@"; user never contains ':' (§25.1), a telephone-subscriber may contain ';'.
    let ue = s.indexOf(":", i);
    if (ue < 0 || ue > at) ue = at;
    if (ue > i) out.user = s.slice(i, ue);
    i = at + 1;
  }
  parseHostPortInto(s, i, end, out);
}

export function parseUri(uri: string): SipUriParts {
  const out: SipUriParts = { scheme: undefined, user: undefined, host: undefined, port: undefined };
  parseUriInto(uri, 0, uri.length, out);
  return out;
}

/** Characters that end a host: ":" port, ";" params, "?" headers, ">" end of name-addr, "," next value, LWS. */
const HOST_END = new Uint8Array(128);
for (const c of ":;?>, \t\r\n") HOST_END[c.charCodeAt(0)] = 1;

/**
 * host [":" port] at `i` into out.host/out.port; returns the index after them. IPv6 references
 * `[2001:db8::1]:5060` lose their brackets (RFC 3261 §19.1.1 hostport, RFC 5118).
 */
export function parseHostPortInto(
  s: string,
  i: number,
  end: number,
  out: { host: string | undefined; port: number | undefined },
): number {
  let j = i;
  if (s.charCodeAt(i) === 91 /* [ */) {
    let close = s.indexOf("]", i);
    if (close < 0 || close >= end) close = end;
    j = close < end ? close + 1 : end;
    out.host = close > i + 1 ? s.slice(i + 1, close) : undefined;
  } else {
    while (j < end) {
      const c = s.charCodeAt(j);
      if (c < 128 && HOST_END[c] === 1) break;
      j++;
    }
    out.host = j > i ? s.slice(i, j) : undefined;
  }
  out.port = undefined;
  if (j < end && s.charCodeAt(j) === 58) {
    let k = j + 1;
    while (k < end && s.charCodeAt(k) >= 48 && s.charCodeAt(k) <= 57) k++;
    out.port = parseDigits(s, j + 1, k, 65535);
    j = k;
  }
  return j;
}

/** What parseAddressInto fills: display name and URI parts. */
export interface AddressParts extends SipUriParts {
  displayName: string | undefined;
  uri: string;
}

/**
 * Fills `out` from the name-addr / addr-spec in `s[from, end)` (RFC 3261 §20.10) and returns the
 * index of the first header parameter. In an addr-spec without <>, a ';' ends the URI: what follows
 * are header parameters (tag, expires), not URI parameters.
 */
export function parseAddressInto(s: string, from: number, end: number, out: AddressParts): number {
  let i = skipLws(s, from, end);
  end = trimEnd(s, i, end);
  let displayName: string | undefined;
  if (s.charCodeAt(i) === DQUOTE) {
    const q = skipQuoted(s, i, end);
    displayName = textAt(s, i, q);
    i = skipLws(s, q, end);
  }
  let lt = s.indexOf("<", i);
  if (lt < 0 || lt > end) lt = end;
  let uriStart: number;
  let uriEnd: number;
  let paramsStart: number;
  if (lt < end) {
    if (displayName === undefined && lt > i) displayName = s.slice(i, trimEnd(s, i, lt));
    uriStart = skipLws(s, lt + 1, end);
    let gt = s.indexOf(">", uriStart);
    if (gt < 0 || gt > end) gt = end;
    uriEnd = trimEnd(s, uriStart, gt);
    paramsStart = gt + 1;
  } else {
    uriStart = i;
    let e = i;
    while (e < end && s.charCodeAt(e) !== 59) e++;
    uriEnd = trimEnd(s, i, e);
    paramsStart = e;
  }
  out.displayName = displayName === "" ? undefined : displayName;
  out.uri = s.slice(uriStart, uriEnd);
  parseUriInto(s, uriStart, uriEnd, out);
  return paramsStart;
}
