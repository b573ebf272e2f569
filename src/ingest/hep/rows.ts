import { isUtf8 } from "node:buffer";
import type { HepPacket } from "../../hep/index.ts";
import type { SipMessage } from "../../sip/index.ts";
import type { RowWriter } from "../../core/index.ts";

/**
 * One HEP packet → one row in the column order of tables.ts. Payloads that are not valid UTF-8
 * (binary RTCP, garbage) or contain NUL are stored base64 with data_extra.payload_encoding.
 */
const IP_PROTO: Record<number, string> = { 6: "TCP", 17: "UDP", 132: "SCTP" };

export function transportName(p: HepPacket, sip?: SipMessage): string {
  const viaT = sip?.via?.transport;
  if (viaT === "TLS" || viaT === "WS" || viaT === "WSS") return viaT;
  return IP_PROTO[p.ipProtocol] ?? (p.ipProtocol ? String(p.ipProtocol) : "UDP");
}

function writePayload(w: RowWriter, payload: Uint8Array, extra: Record<string, unknown>): void {
  if (payload.indexOf(0) < 0 && isUtf8(payload)) w.bytes(payload);
  else {
    w.str(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64"));
    extra.payload_encoding = "base64";
  }
}

function commonExtra(p: HepPacket): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  if (p.nodeName !== undefined) extra.node_name = p.nodeName;
  if (p.captureId) extra.capture_id = p.captureId;
  if (p.correlationId !== undefined) extra.correlation_id = p.correlationId;
  if (p.vlan !== undefined) extra.vlan = p.vlan;
  if (p.mos !== undefined) extra.mos = p.mos;
  if (p.rFactor !== undefined) extra.r_factor = p.rFactor;
  if (p.jitter !== undefined) extra.jitter = p.jitter;
  if (p.transactionType !== undefined) extra.transaction_type = p.transactionType;
  if (p.tsFallback) extra.ts_fallback = true;
  return extra;
}

/** Writes the 16 base columns that follow `timestamp` handling; shared by SIP and non-SIP rows. */
function writeBase(
  w: RowWriter,
  p: HepPacket,
  f: { sessionId: string | undefined; caller?: string; callee?: string; event: string; method?: string; responseCode?: number; cseqMethod?: string; protocol: string; cid: string | undefined },
): void {
  w.time(p.timestampUs)
    .str(f.sessionId)
    .str(f.caller)
    .str(f.callee)
    .str(p.srcIp)
    .str(p.dstIp)
    .int(p.srcPort)
    .int(p.dstPort)
    .str(f.event)
    .str(f.method)
    .int(f.responseCode)
    .str(f.cseqMethod)
    .int(p.protoType)
    .str(f.protocol)
    .int(p.captureId)
    .str(f.cid);
}

export function writeSipRow(w: RowWriter, p: HepPacket, sip: SipMessage, registration: boolean): void {
  const extra = commonExtra(p);
  if (sip.from?.tag) extra.from_tag = sip.from.tag;
  if (sip.to?.tag) extra.to_tag = sip.to.tag;
  if (sip.requestUri) extra.request_uri = sip.requestUri;
  if (sip.userAgent) extra.user_agent = sip.userAgent;
  if (sip.via?.branch) extra.via_branch = sip.via.branch;
  extra.cseq = sip.cseq;
  if (sip.reasonPhrase) extra.reason = sip.reasonPhrase;
  if (sip.pai?.user) extra.pai_user = sip.pai.user;
  if (sip.contact?.uri && !registration) extra.contact = sip.contact.uri;
  if (sip.ruriUser) extra.ruri_user = sip.ruriUser;
  if (sip.contentType) extra.content_type = sip.contentType;
  const custom = sip.customHeaders;
  for (const _ in custom) {
    extra.custom_headers = custom;
    break;
  }
  writeBase(w, p, {
    sessionId: sip.callId,
    caller: sip.from?.user,
    callee: sip.to?.user,
    event: sip.isRequest ? sip.method : String(sip.statusCode),
    method: sip.isRequest ? sip.method : undefined,
    responseCode: sip.statusCode,
    cseqMethod: sip.cseqMethod,
    protocol: transportName(p, sip),
    cid: sip.correlationId ?? p.correlationId,
  });
  writePayload(w, p.payload, extra);
  w.str(JSON.stringify(extra));
  if (registration) {
    const aor = sip.to?.uri ?? sip.from?.uri;
    const expires = sip.contact?.expires ?? sip.expires;
    w.str(aor).str(sip.contact?.uri).int(expires).str(sip.userAgent);
  }
  w.end();
}

/** Non-SIP protocols (RTCP, agent reports, DNS, logs) and SIP payloads that did not parse. */
export function writeOtherRow(w: RowWriter, p: HepPacket, event: string, sipFailure?: string): void {
  const extra = commonExtra(p);
  if (sipFailure) extra.sip_parse_error = sipFailure;
  writeBase(w, p, {
    sessionId: p.correlationId,
    event,
    protocol: transportName(p),
    cid: p.correlationId,
  });
  writePayload(w, p.payload, extra);
  w.str(JSON.stringify(extra));
  w.end();
}
