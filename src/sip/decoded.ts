/**
 * Full JSON-friendly view of one SIP message for the "decoded message" API: start-line parts,
 * every header field in order, the body as text and its SDP. Not on the hot path; never throws.
 */
import {
  frameSip,
  headerValue,
  newHeaderField,
  newStartLine,
  parseStartLine,
  readHeaderField,
  type SipFrame,
} from "./framing.ts";
import { canonicalHeaderName } from "./headers.ts";
import { parseSip } from "./parse.ts";
import { parseSdp, findSdpBody, type SdpInfo } from "./sdp.ts";
import type { SipMessage, SipParseOptions, SipParseReason } from "./types.ts";

export interface DecodedSipHeader {
  /** Canonical name: compact form expanded, registered names in their usual spelling (`i` → `Call-ID`). */
  name: string;
  /** The name exactly as sent. */
  rawName: string;
  /** Value with folding replaced by one SP (RFC 3261 §7.3.1). */
  value: string;
}

export interface DecodedSip {
  /** The start line as sent ("" when the payload is empty). */
  firstLine: string;
  /** "request" / "response" when the start line parses, else "unknown". */
  kind: "request" | "response" | "unknown";
  method?: string;
  requestUri?: string;
  statusCode?: number;
  reasonPhrase?: string;
  /** Header fields in message order; malformed lines appear with name "" and the line as value. */
  headers: DecodedSipHeader[];
  /** Body decoded as UTF-8 ("" when none). */
  body: string;
  /** Body size in bytes. */
  bodyLength: number;
  /** Present when the body is SDP or a multipart holding SDP. */
  sdp?: SdpInfo;
  /** The hot-path fields (same as parseSip) when the message parses. */
  fields?: SipMessage;
  /** Why parseSip rejects the message; the rest is filled as far as it could be read. */
  error?: SipParseReason;
}

const utf8 = new TextDecoder("utf-8");

export function decodeSipMessage(payload: Uint8Array, opts?: SipParseOptions): DecodedSip {
  const parsed = parseSip(payload, opts);
  const out: DecodedSip = { firstLine: "", kind: "unknown", headers: [], body: "", bodyLength: 0 };
  if (parsed.ok) out.fields = parsed.value;
  else out.error = parsed.reason;

  const frame: SipFrame = { text: "", bodyOffset: 0 };
  const frameFailure = frameSip(payload, frame);
  if (frameFailure === "empty") return out;
  // Without an end of headers (truncated capture) every byte is shown as header text.
  const text = frameFailure === undefined ? frame.text : utf8.decode(payload).replace(/^[\r\n]+/, "");
  const bodyOffset = frameFailure === undefined ? frame.bodyOffset : payload.length;
  const lineEnd = text.indexOf("\n");
  out.firstLine = (lineEnd < 0 ? text : text.slice(0, lineEnd)).replace(/\r$/, "");

  const sl = newStartLine();
  if (parseStartLine(text, sl) !== undefined) return out;
  if (sl.isRequest) {
    out.kind = "request";
    out.method = sl.method;
    if (sl.requestUri !== undefined) out.requestUri = sl.requestUri;
  } else {
    out.kind = "response";
    if (sl.statusCode !== undefined) out.statusCode = sl.statusCode;
    if (sl.reasonPhrase !== undefined) out.reasonPhrase = sl.reasonPhrase;
  }

  const f = newHeaderField();
  let contentType: string | undefined;
  for (let pos = sl.next; pos < text.length; ) {
    const lineStart = pos;
    pos = readHeaderField(text, pos, f);
    if (!f.wellFormed) {
      out.headers.push({ name: "", rawName: "", value: text.slice(lineStart, pos).replace(/\r?\n$/, "") });
      continue;
    }
    const rawName = text.slice(f.nameStart, f.nameEnd);
    const name = canonicalHeaderName(rawName);
    const value = headerValue(text, f);
    if (name === "Content-Type") contentType ??= value;
    out.headers.push({ name, rawName, value });
  }

  // Same body bounds as the hot path when it parsed; otherwise everything after the headers.
  const bodyLength = parsed.ok ? parsed.value.bodyLength : Math.max(0, payload.length - bodyOffset);
  const body = payload.subarray(bodyOffset, bodyOffset + bodyLength);
  out.body = utf8.decode(body);
  out.bodyLength = body.length;
  const sdpBytes = contentType === undefined || body.length === 0 ? undefined : findSdpBody(contentType, body);
  if (sdpBytes !== undefined) out.sdp = parseSdp(sdpBytes);
  return out;
}
