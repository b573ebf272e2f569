import { isUtf8 } from "node:buffer";
import { FLAG_SIP_PARSED, RECORD_HEADER } from "../hep/index.ts";
import { parseSip, type SipMessage } from "../sip/index.ts";
import type { StreamFilter } from "./filter.ts";

/**
 * One captured event on the main thread: a view of its record in a copied capture chunk
 * (src/hep/stream-capture.ts), decoded only as far as somebody needs it. The SIP parse and the two JSON frames
 * (with and without payload) are built at most once however many subscribers get the event.
 */
export interface SipFrame {
  method: string;
  /** "" for requests, the 3-digit status for responses (docs/STREAM.md "Frames"). */
  resp_code: string;
  resp_text: string;
  callid: string;
  /** The CSeq header value: number and method, e.g. "1 INVITE". */
  cseq: string;
  from_user: string;
  to_user: string;
  ruri_user: string;
}

/** A live-stream frame (docs/STREAM.md "Frames"); members may be missing, new ones may be added. */
export interface StreamFrame {
  ts: number;
  proto: number;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  node_id: number;
  sip?: SipFrame;
  payload?: string;
  /** "base64" when the payload is not UTF-8 text (binary RTCP): the same rule as the lake's data_extra.payload_encoding. */
  payload_encoding?: "base64";
}

const ascii = (b: Uint8Array, from: number, len: number): string =>
  String.fromCharCode(...b.subarray(from, from + len));
const text = new TextDecoder();

export class StreamEvent {
  readonly proto: number;
  private sipDone = false;
  private sipMsg: SipMessage | undefined;
  private plain: string | undefined;
  private full: string | undefined;

  /** `bytes` is a chunk the event may keep (copied off the ingest thread's buffer); `at` its record. */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly view: DataView,
    private readonly at: number,
  ) {
    this.proto = view.getUint16(at + 20, true);
  }

  get length(): number {
    return this.view.getUint32(this.at, true);
  }

  /** The capture time in µs (the agent's, or the shifted one: docs/ARCHITECTURE.md "Agent clocks outside the accepted window"). */
  get tsUs(): number {
    return this.view.getFloat64(this.at + 4, true);
  }

  /** The SIP message when proto is 1 and it parsed at ingest (parsed again here, once). */
  sip(): SipMessage | undefined {
    if (this.sipDone) return this.sipMsg;
    this.sipDone = true;
    if (this.proto !== 1 || (this.bytes[this.at + 22]! & FLAG_SIP_PARSED) === 0) return undefined;
    const r = parseSip(this.payload());
    this.sipMsg = r.ok ? r.value : undefined;
    return this.sipMsg;
  }

  private payload(): Uint8Array {
    const at = this.at;
    const off = at + RECORD_HEADER + this.bytes[at + 23]! + this.bytes[at + 24]!;
    return this.bytes.subarray(off, off + this.view.getUint32(at + 28, true));
  }

  /** Whether the event passes `f` (proto; method, callid and only_requests for SIP only: others pass). */
  matches(f: StreamFilter): boolean {
    if (f.protos && !f.protos.has(this.proto)) return false;
    if (this.proto !== 1 || (!f.methods && !f.callIds && !f.onlyRequests)) return true;
    const s = this.sip();
    if (!s) return !f.methods && !f.callIds; // SIP that did not parse: no method or Call-ID to match
    if (f.onlyRequests && !s.isRequest) return false;
    if (f.callIds && !f.callIds.has(s.callId)) return false;
    return !f.methods || f.methods.has(s.method.toUpperCase());
  }

  frame(withPayload: boolean): StreamFrame {
    const v = this.view;
    const at = this.at;
    const b = this.bytes;
    const srcLen = b[at + 23]!;
    const f: StreamFrame = {
      ts: Math.floor(v.getFloat64(at + 4, true) / 1000),
      proto: this.proto,
      src_ip: ascii(b, at + RECORD_HEADER, srcLen),
      src_port: v.getUint16(at + 16, true),
      dst_ip: ascii(b, at + RECORD_HEADER + srcLen, b[at + 24]!),
      dst_port: v.getUint16(at + 18, true),
      node_id: v.getUint32(at + 12, true),
    };
    const s = this.sip();
    if (s) {
      f.sip = {
        method: s.method,
        resp_code: s.isRequest || s.statusCode === undefined ? "" : String(s.statusCode),
        resp_text: s.isRequest ? "" : (s.reasonPhrase ?? ""),
        callid: s.callId,
        cseq: `${s.cseq} ${s.cseqMethod}`,
        from_user: s.from?.user ?? "",
        to_user: s.to?.user ?? "",
        ruri_user: s.ruriUser ?? "",
      };
    }
    if (withPayload) {
      const p = this.payload();
      if (p.indexOf(0) < 0 && isUtf8(p)) f.payload = text.decode(p);
      else {
        f.payload = Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString("base64");
        f.payload_encoding = "base64";
      }
    }
    return f;
  }

  /** The frame as sent: JSON text, built once per variant. */
  json(withPayload: boolean): string {
    if (withPayload) return (this.full ??= JSON.stringify(this.frame(true)));
    return (this.plain ??= JSON.stringify(this.frame(false)));
  }
}

/** The events of one sealed chunk (`bytes` holds `count` records). */
export function* eventsOf(bytes: Uint8Array, count: number): Generator<StreamEvent> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let i = 0; i < count && at + RECORD_HEADER <= bytes.length; i++) {
    const e = new StreamEvent(bytes, view, at);
    yield e;
    at += e.length;
  }
}
