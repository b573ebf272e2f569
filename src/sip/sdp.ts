/**
 * SDP (RFC 4566 / RFC 8866) essentials for QoS correlation: where media goes (c=, m=, a=rtcp of
 * RFC 3605), which codecs (a=rtpmap, static payload types of RFC 3551 §6) and the direction
 * (RFC 3264 §5.1). Lenient: unknown or malformed lines are skipped. Never throws.
 */
import { findParam, parseDigits } from "./uri.ts";
import type { SipMessage } from "./types.ts";

export type SdpDirection = "sendrecv" | "sendonly" | "recvonly" | "inactive";

/** c= line: `IN IP4 192.0.2.1` (a multicast `/ttl/count` suffix is dropped from `address`). */
export interface SdpConnection {
  netType: string;
  addrType: string;
  address: string;
}

/** o= line: username sess-id sess-version nettype addrtype unicast-address. */
export interface SdpOrigin {
  username: string;
  sessionId: string;
  sessionVersion: string;
  netType: string;
  addrType: string;
  address: string;
}

export interface SdpCodec {
  payloadType: number;
  /** Encoding name as written (`PCMU`, `opus`, `telephone-event`). */
  name: string;
  clockRate: number | undefined;
  /** Encoding parameters of audio rtpmap (channels), when given. */
  channels: number | undefined;
}

export interface SdpMedia {
  /** audio, video, application, image, ... */
  type: string;
  /** 0 means the stream is disabled (RFC 3264 §6). */
  port: number;
  /** `m=audio 49170/2 ...` → 2. */
  portCount: number | undefined;
  proto: string;
  formats: string[];
  /** This media's own c= line, if any. */
  connection: SdpConnection | undefined;
  /** Effective address: media c= else session c= (RFC 4566 §5.7). */
  address: string | undefined;
  /** a=rtcp port (RFC 3605); otherwise RTCP is on port + 1. */
  rtcpPort: number | undefined;
  rtcpAddress: string | undefined;
  /** One entry per numeric format with a known name (a=rtpmap, else the RFC 3551 static table). */
  codecs: SdpCodec[];
  /** Media attribute, else session attribute, else sendrecv (RFC 3264 §5.1 default). */
  direction: SdpDirection;
}

export interface SdpInfo {
  version: number | undefined;
  origin: SdpOrigin | undefined;
  sessionName: string | undefined;
  /** Session-level c= line. */
  connection: SdpConnection | undefined;
  /** Session-level direction attribute, undefined when not given. */
  direction: SdpDirection | undefined;
  media: SdpMedia[];
}

/** RFC 3551 §6 static payload types, in rtpmap syntax. */
const STATIC_PAYLOAD_TYPES: Readonly<Record<number, string>> = {
  0: "PCMU/8000",
  3: "GSM/8000",
  4: "G723/8000",
  5: "DVI4/8000",
  6: "DVI4/16000",
  7: "LPC/8000",
  8: "PCMA/8000",
  9: "G722/8000",
  10: "L16/44100/2",
  11: "L16/44100",
  12: "QCELP/8000",
  13: "CN/8000",
  14: "MPA/90000",
  15: "G728/8000",
  16: "DVI4/11025",
  17: "DVI4/22050",
  18: "G729/8000",
  25: "CelB/90000",
  26: "JPEG/90000",
  28: "nv/90000",
  31: "H261/90000",
  32: "MPV/90000",
  33: "MP2T/90000",
  34: "H263/90000",
};

const utf8 = new TextDecoder("utf-8");

const int = (s: string | undefined): number | undefined => (s === undefined ? undefined : parseDigits(s, 0, s.length));

/** Space-separated fields of a line (RFC 4566 §5: one SP; tolerate more, and tabs). */
function fields(value: string): string[] {
  const parts = value.split(" ");
  return value.includes("\t") || parts.includes("") ? value.split(/[ \t]+/).filter((f) => f !== "") : parts;
}

function direction(name: string): SdpDirection | undefined {
  switch (name) {
    case "sendrecv":
    case "sendonly":
    case "recvonly":
    case "inactive":
      return name;
    default:
      return undefined;
  }
}

function connection(value: string): SdpConnection | undefined {
  const [netType, addrType, addr] = fields(value);
  if (netType === undefined || addrType === undefined || addr === undefined) return undefined;
  // IP4 multicast carries /ttl[/count], IP6 multicast /count (RFC 4566 §5.7).
  const slash = addr.indexOf("/");
  return { netType, addrType, address: slash < 0 ? addr : addr.slice(0, slash) };
}

function codec(payloadType: number, encoding: string): SdpCodec {
  const [name = "", rate, channels] = encoding.trim().split("/");
  return { payloadType, name, clockRate: int(rate), channels: int(channels) };
}

/** Per media section while reading: what is resolved only at the end. */
interface MediaState {
  media: SdpMedia;
  /** Whether the m= line was valid; invalid sections swallow their attributes but are not reported. */
  reported: boolean;
  direction: SdpDirection | undefined;
  rtpmap: Map<number, string>;
}

export function parseSdp(body: Uint8Array | string): SdpInfo {
  const text = typeof body === "string" ? body : utf8.decode(body);
  const info: SdpInfo = {
    version: undefined,
    origin: undefined,
    sessionName: undefined,
    connection: undefined,
    direction: undefined,
    media: [],
  };
  const sections: MediaState[] = [];
  let current: MediaState | undefined;
  for (let pos = 0; pos < text.length; ) {
    let eol = text.indexOf("\n", pos);
    if (eol < 0) eol = text.length;
    const lineEnd = eol > pos && text.charCodeAt(eol - 1) === 13 ? eol - 1 : eol;
    const type = text.charCodeAt(pos);
    const valid = lineEnd - pos >= 2 && text.charCodeAt(pos + 1) === 61; /* = */
    const value = valid ? text.slice(pos + 2, lineEnd) : "";
    pos = eol + 1;
    if (!valid) continue;
    switch (type) {
      case 0x76: // v
        info.version = int(value.trim());
        break;
      case 0x6f: {
        // o=<username> <sess-id> <sess-version> <nettype> <addrtype> <unicast-address>
        const [username, sessionId, sessionVersion, netType, addrType, address] = fields(value);
        if (address !== undefined)
          info.origin = {
            username: username!,
            sessionId: sessionId!,
            sessionVersion: sessionVersion!,
            netType: netType!,
            addrType: addrType!,
            address,
          };
        break;
      }
      case 0x73: // s
        if (current === undefined) info.sessionName = value;
        break;
      case 0x63: // c
        if (current === undefined) info.connection = connection(value);
        else current.media.connection = connection(value);
        break;
      case 0x6d: {
        // m=<media> <port>[/<number of ports>] <proto> <fmt> ...
        const [mediaType = "", portText = "", proto = "", ...formats] = fields(value);
        const slash = portText.indexOf("/");
        const port = int(slash < 0 ? portText : portText.slice(0, slash));
        const media: SdpMedia = {
          type: mediaType,
          port: port ?? 0,
          portCount: slash < 0 ? undefined : int(portText.slice(slash + 1)),
          proto,
          formats,
          connection: undefined,
          address: undefined,
          rtcpPort: undefined,
          rtcpAddress: undefined,
          codecs: [],
          direction: "sendrecv",
        };
        current = {
          media,
          reported: port !== undefined && mediaType !== "" && proto !== "",
          direction: undefined,
          rtpmap: new Map(),
        };
        sections.push(current);
        break;
      }
      case 0x61: // a
        attribute(value, info, current);
        break;
    }
  }
  for (const section of sections) {
    if (!section.reported) continue;
    const m = section.media;
    for (const f of m.formats) {
      const pt = int(f);
      const encoding = pt === undefined ? undefined : (section.rtpmap.get(pt) ?? STATIC_PAYLOAD_TYPES[pt]);
      if (pt !== undefined && encoding !== undefined) m.codecs.push(codec(pt, encoding));
    }
    m.address = m.connection?.address ?? info.connection?.address;
    m.direction = section.direction ?? info.direction ?? "sendrecv";
    info.media.push(m);
  }
  return info;
}

function attribute(value: string, info: SdpInfo, current: MediaState | undefined): void {
  const colon = value.indexOf(":");
  const name = colon < 0 ? value.trim() : value.slice(0, colon);
  const dir = direction(name);
  if (dir !== undefined) {
    if (current === undefined) info.direction = dir;
    else current.direction = dir;
    return;
  }
  if (current === undefined || colon < 0) return;
  if (name === "rtpmap") {
    // a=rtpmap:<payload type> <encoding name>/<clock rate>[/<encoding parameters>]
    const [pt, encoding] = fields(value.slice(colon + 1));
    const n = int(pt);
    if (n !== undefined && encoding !== undefined) current.rtpmap.set(n, encoding);
  } else if (name === "rtcp") {
    // a=rtcp:port [nettype space addrtype space connection-address] (RFC 3605 §2.1)
    const [port, netType, addrType, addr] = fields(value.slice(colon + 1));
    current.media.rtcpPort = int(port);
    if (netType !== undefined && addrType !== undefined && addr !== undefined) current.media.rtcpAddress = addr;
  }
}

/** The body bytes of a parsed message (no copy). */
export function sipBody(payload: Uint8Array, msg: Pick<SipMessage, "bodyOffset" | "bodyLength">): Uint8Array {
  return payload.subarray(msg.bodyOffset, msg.bodyOffset + msg.bodyLength);
}

const latin1 = new TextDecoder("latin1");
const mediaType = (contentType: string): string => contentType.split(";")[0]!.trim().toLowerCase();

/**
 * The SDP bytes inside a body: the body itself for application/sdp, or the application/sdp part of
 * a multipart body (RFC 2046 §5.1, e.g. SDP + ISUP in SIP-I, RFC 3204), searched recursively for
 * nested multiparts. Undefined when there is no SDP.
 */
export function findSdpBody(contentType: string, body: Uint8Array, depth = 0): Uint8Array | undefined {
  const type = mediaType(contentType);
  if (type === "application/sdp") return body;
  if (!type.startsWith("multipart/") || depth > 3) return undefined;
  const semicolon = contentType.indexOf(";");
  const boundary = semicolon < 0 ? undefined : findParam(contentType, semicolon, contentType.length, "boundary");
  if (boundary === undefined || boundary === "") return undefined;
  // latin1 keeps one character per byte, so string offsets are byte offsets (parts may be binary).
  const text = latin1.decode(body);
  const delimiter = `--${boundary}`;
  let at = text.indexOf(delimiter);
  while (at >= 0) {
    let partStart = text.indexOf("\n", at + delimiter.length);
    if (partStart < 0 || text.startsWith("--", at + delimiter.length)) return undefined; // close-delimiter
    partStart += 1;
    let next = text.indexOf(`\n${delimiter}`, partStart);
    if (next < 0) next = text.length;
    const partEnd = next > 0 && text.charCodeAt(next - 1) === 13 ? next - 1 : next;
    const found = sdpInPart(text, body, partStart, partEnd, depth);
    if (found !== undefined) return found;
    at = next < text.length ? next + 1 : -1;
  }
  return undefined;
}

/** One MIME part: headers, empty line, content. Headers are Content-* fields (RFC 2046 §5.1.1). */
function sdpInPart(text: string, body: Uint8Array, start: number, end: number, depth: number): Uint8Array | undefined {
  const part = text.slice(start, end);
  const m = /\r?\n\r?\n/.exec(part);
  const headers = m === null ? part : part.slice(0, m.index);
  const contentStart = m === null ? end : start + m.index + m[0].length;
  const ct = /^content-type[ \t]*:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(headers);
  // A part without Content-Type is text/plain (RFC 2046 §5.1).
  if (ct === null || ct[1] === undefined) return undefined;
  return findSdpBody(ct[1].replace(/\r?\n[ \t]+/g, " "), body.subarray(contentStart, end), depth + 1);
}

/** Parsed SDP of a message whose Content-Type is application/sdp or a multipart holding one. */
export function sipSdp(
  payload: Uint8Array,
  msg: Pick<SipMessage, "bodyOffset" | "bodyLength" | "contentType">,
): SdpInfo | undefined {
  if (msg.contentType === undefined || msg.bodyLength === 0) return undefined;
  const sdp = findSdpBody(msg.contentType, sipBody(payload, msg));
  return sdp === undefined ? undefined : parseSdp(sdp);
}
