import { isUtf8 } from "node:buffer";
import type { HepPacket } from "../../hep/index.ts";
import type { SipMessage } from "../../sip/index.ts";
import type { RowWriter } from "../../core/index.ts";
import type { ClockedPacket } from "./clock.ts";

/**
 * One HEP packet → one row in the column order of tables.ts. Payloads that are not valid UTF-8
 * (binary RTCP, garbage) or contain NUL are stored base64 with data_extra.payload_encoding.
 */
const IP_PROTO: Record<number, string> = { 6: "TCP", 17: "UDP", 132: "SCTP" };

export function transportName(p: HepPacket, sip?: SipMessage): string {
  const viaT = sip?.via?.transport;
  if (viaT === "TLS" || viaT === "WS" || viaT === "WSS") return viaT;
  return p.ipProtocol ? ipProtocolName(p.ipProtocol) : "UDP";
}

/** The `protocol` column's text for an IP protocol number (HEP chunk 0x0002): TCP, UDP, SCTP or the number. */
export const ipProtocolName = (n: number): string => IP_PROTO[n] ?? String(n);

/**
 * data_extra as alternating keys and values (undefined values are left out), reused row after
 * row: the JSON is written straight into the batch (RowWriter.jsonObject) without building an
 * object or a string; other writers get JSON.stringify of the same members.
 */
type Extra = unknown[];
const extraScratch: Extra = [];

function writeExtra(w: RowWriter, kv: Extra): void {
  if (w.jsonObject) w.jsonObject(kv);
  else {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < kv.length; i += 2) if (kv[i + 1] !== undefined) o[kv[i] as string] = kv[i + 1];
    w.str(JSON.stringify(o));
  }
}

function writePayload(w: RowWriter, payload: Uint8Array, extra: Extra): void {
  if (payload.indexOf(0) < 0 && isUtf8(payload)) w.bytes(payload);
  else {
    w.str(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64"));
    extra.push("payload_encoding", "base64");
  }
}

function commonExtra(p: HepPacket): Extra {
  const extra = extraScratch;
  extra.length = 0;
  extra.push(
    "node_name",
    p.nodeName,
    "capture_id",
    p.captureId || undefined,
    "correlation_id",
    p.correlationId,
    "vlan",
    p.vlan,
    "mos",
    p.mos,
    "r_factor",
    p.rFactor,
    "jitter",
    p.jitter,
    "transaction_type",
    p.transactionType,
    "ts_fallback",
    p.tsFallback ? true : undefined,
    // docs/ARCHITECTURE.md "Agent clocks outside the accepted window": how the time was made.
    "time_source",
    p.tsFallback ? ((p as ClockedPacket).timeShiftUs !== undefined ? "shifted" : "receive") : undefined,
    "time_shifted_us",
    (p as ClockedPacket).timeShiftUs,
  );
  return extra;
}

/** Writes the 16 base columns that follow `timestamp` handling; shared by SIP and non-SIP rows. */
function writeBase(
  w: RowWriter,
  p: HepPacket,
  f: {
    sessionId: string | undefined;
    caller?: string;
    callee?: string;
    event: string;
    method?: string;
    responseCode?: number;
    cseqMethod?: string;
    protocol: string;
    cid: string | undefined;
  },
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
  let custom: Record<string, string> | undefined;
  for (const _ in sip.customHeaders) {
    custom = sip.customHeaders;
    break;
  }
  extra.push(
    "from_tag",
    sip.from?.tag || undefined,
    "to_tag",
    sip.to?.tag || undefined,
    "request_uri",
    sip.requestUri || undefined,
    "user_agent",
    sip.userAgent || undefined,
    "via_branch",
    sip.via?.branch || undefined,
    "cseq",
    sip.cseq,
    "reason",
    sip.reasonPhrase || undefined,
    "pai_user",
    sip.pai?.user || undefined,
    "contact",
    !registration ? sip.contact?.uri || undefined : undefined,
    "ruri_user",
    sip.ruriUser || undefined,
    "content_type",
    sip.contentType || undefined,
    "custom_headers",
    custom,
  );
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
  writeExtra(w, extra);
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
  extra.push("sip_parse_error", sipFailure || undefined);
  writeBase(w, p, {
    sessionId: p.correlationId,
    event,
    protocol: transportName(p),
    cid: p.correlationId,
  });
  writePayload(w, p.payload, extra);
  writeExtra(w, extra);
  w.end();
}
