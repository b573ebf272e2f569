/**
 * The load generator's own SIP wire format: a small, fast parser and builder for the messages its
 * scenarios exchange (RFC 3261 §7). It is not the ingest parser (src/sip): a load generator needs the
 * routing headers of every message at thousands of messages per second, nothing more.
 */

export interface SipWireMessage {
  /** Request method, or "" for a response. */
  method: string;
  uri: string;
  status: number;
  reason: string;
  /** Lower-case full header names (compact forms expanded) → values in order. */
  headers: Map<string, string[]>;
  body: string;
  raw: string;
}

/** RFC 3261 §7.3.3 compact forms. */
const COMPACT: Record<string, string> = {
  i: "call-id",
  f: "from",
  t: "to",
  v: "via",
  m: "contact",
  l: "content-length",
  c: "content-type",
  k: "supported",
  s: "subject",
  e: "content-encoding",
};

/** Parses one datagram; null when it is not a SIP message (keep-alive CRLFs, garbage). */
export function parseSipWire(raw: string): SipWireMessage | null {
  const headEnd = raw.indexOf("\r\n\r\n");
  const head = headEnd < 0 ? raw : raw.slice(0, headEnd);
  const body = headEnd < 0 ? "" : raw.slice(headEnd + 4);
  const lines = head.split(/\r?\n/);
  const first = lines[0]?.trim() ?? "";
  if (first === "") return null;
  let method = "";
  let uri = "";
  let status = 0;
  let reason = "";
  if (first.startsWith("SIP/2.0 ")) {
    status = Number.parseInt(first.slice(8, 11), 10);
    if (!(status >= 100 && status < 700)) return null;
    reason = first.slice(12);
  } else {
    const parts = first.split(" ");
    if (parts.length !== 3 || parts[2] !== "SIP/2.0") return null;
    method = parts[0]!;
    uri = parts[1]!;
  }
  const headers = new Map<string, string[]>();
  let last = "";
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    if ((line[0] === " " || line[0] === "\t") && last) {
      const vals = headers.get(last)!;
      vals[vals.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    let name = line.slice(0, colon).trim().toLowerCase();
    name = COMPACT[name] ?? name;
    const value = line.slice(colon + 1).trim();
    // Via and Contact may carry several comma-separated values (§7.3.1); only Via needs splitting here.
    const values = name === "via" ? splitComma(value) : [value];
    const list = headers.get(name);
    if (list) list.push(...values);
    else headers.set(name, values);
    last = name;
  }
  return { method, uri, status, reason, headers, body, raw };
}

/** Splits on commas outside quotes and angle brackets. */
function splitComma(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === "<") depth++;
    else if (!quoted && ch === ">") depth--;
    else if (!quoted && depth === 0 && ch === ",") {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(value.slice(start).trim());
  return out.filter((v) => v !== "");
}

export const header = (m: SipWireMessage, name: string): string => m.headers.get(name)?.[0] ?? "";

/** CSeq "<number> <method>" (§8.1.1.5). */
export function cseqOf(m: SipWireMessage): { num: number; method: string } {
  const [num, method] = header(m, "cseq").split(/\s+/);
  return { num: Number.parseInt(num ?? "", 10) || 0, method: (method ?? "").toUpperCase() };
}

/** The `tag` parameter of a From/To value. */
export function tagOf(value: string): string {
  const m = /;\s*tag=([^;>\s]+)/i.exec(value.slice(value.lastIndexOf(">") + 1)) ?? /;\s*tag=([^;>\s]+)/i.exec(value);
  return m?.[1] ?? "";
}

/** The URI inside `<…>` of a Contact/To value, else the value up to its parameters. */
export function uriOf(value: string): string {
  const lt = value.indexOf("<");
  if (lt >= 0) return value.slice(lt + 1, value.indexOf(">", lt));
  return value.split(";")[0]!.trim();
}

/** `branch` of a Via value (§8.1.1.7). */
export function branchOf(via: string): string {
  return /;\s*branch=([^;,\s]+)/i.exec(via)?.[1] ?? "";
}

/** Builds a message: first line, headers in order, Content-Length computed from the body. */
export function buildSip(firstLine: string, headers: Array<[string, string]>, body = ""): string {
  let out = `${firstLine}\r\n`;
  for (const [n, v] of headers) out += `${n}: ${v}\r\n`;
  out += `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return out;
}

/** A response copying Via, From, To (tag added when missing), Call-ID and CSeq (§8.2.6.2). */
export function buildResponse(
  req: SipWireMessage,
  status: number,
  reason: string,
  toTag: string,
  extra: Array<[string, string]> = [],
  body = "",
): string {
  const headers: Array<[string, string]> = [];
  for (const v of req.headers.get("via") ?? []) headers.push(["Via", v]);
  headers.push(["From", header(req, "from")]);
  const to = header(req, "to");
  headers.push(["To", toTag && !tagOf(to) && status > 100 ? `${to};tag=${toTag}` : to]);
  headers.push(["Call-ID", header(req, "call-id")], ["CSeq", header(req, "cseq")], ...extra);
  return buildSip(`SIP/2.0 ${status} ${reason}`, headers, body);
}

/** A minimal audio offer/answer (RFC 4566) so peers that expect SDP get it. */
export function sdpBody(ip: string, port: number, sessionId: number): string {
  const family = ip.includes(":") ? "IP6" : "IP4";
  return [
    "v=0",
    `o=loadgen ${sessionId} ${sessionId} IN ${family} ${ip}`,
    "s=-",
    `c=IN ${family} ${ip}`,
    "t=0 0",
    `m=audio ${port} RTP/AVP 0`,
    "a=rtpmap:0 PCMU/8000",
    "",
  ].join("\r\n");
}
