/**
 * Turns one direction of a reassembled TCP stream into SIP messages. The stream is plain SIP
 * (RFC 3261 §18.3 framing) or, after an HTTP Upgrade handshake, WebSocket frames carrying SIP
 * (RFC 7118). A capture that starts mid-connection, or a hole in it, is handled by looking for the
 * next SIP start line (or a WebSocket frame holding one) and dropping the bytes before it.
 */
import { findStartLine, frameSipMessage, sipStartInDatagram, skipLineBreaks } from "./sip-framing.ts";
import type { FrameRef, StreamChunk } from "./tcp-stream.ts";
import { couldStartWsFrame, parseHttpHead, parseWsFrame, WS_OPCODE, WsMessageAssembler } from "./websocket.ts";

export type StreamStat =
  | "keepalive"
  | "tcp_gap"
  | "tcp_resync"
  | "tcp_skipped_bytes"
  | "http_head_skipped"
  | "sip_too_large"
  | "ws_upgrade"
  | "ws_control_frame"
  | "ws_invalid_frame"
  | "ws_not_sip"
  | "ws_compressed"
  | "ws_orphan_continuation";

export interface StreamMessage {
  payload: Uint8Array;
  transport: "tcp" | "ws";
  at: FrameRef;
}

type Mode = "unknown" | "sip" | "ws";

export class SipStreamDecoder {
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;
  private mode: Mode = "unknown";
  private readonly ws = new WsMessageAssembler();

  constructor(
    private readonly count: (stat: StreamStat, n?: number) => void,
    private readonly maxMessageBytes: number,
  ) {}

  push(chunk: StreamChunk, out: StreamMessage[]): void {
    if (chunk.gapBefore) {
      this.count("tcp_gap");
      this.reset();
    }
    this.append(chunk.data);
    this.decode(chunk.at, out);
  }

  /** Forget buffered bytes and framing state (a hole in the capture, or a new connection). */
  reset(): void {
    this.start = 0;
    this.end = 0;
    this.mode = "unknown";
    this.ws.reset();
  }

  private append(data: Uint8Array): void {
    if (this.end + data.length > this.buf.length) {
      const live = this.end - this.start;
      if (live + data.length <= this.buf.length) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        const grown = new Uint8Array(Math.max(live + data.length, this.buf.length * 2, 4096));
        grown.set(this.buf.subarray(this.start, this.end), 0);
        this.buf = grown;
      }
      this.start = 0;
      this.end = live;
    }
    this.buf.set(data, this.end);
    this.end += data.length;
  }

  private decode(at: FrameRef, out: StreamMessage[]): void {
    const view = this.buf.subarray(0, this.end);
    for (let progress = true; progress && this.start < this.end; ) {
      if (this.mode === "sip") progress = this.stepSip(view, at, out);
      else if (this.mode === "ws") progress = this.stepWs(view, at, out);
      else progress = this.stepUnknown(view);
    }
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
      // Idle connections keep no large buffer.
      if (this.buf.length > 65536) this.buf = new Uint8Array(0);
    }
  }

  private stepSip(view: Uint8Array, at: FrameRef, out: StreamMessage[]): boolean {
    const next = skipLineBreaks(view, this.start);
    if (next > this.start) {
      this.count("keepalive");
      this.start = next;
      return true;
    }
    const r = frameSipMessage(view, this.start, this.maxMessageBytes);
    switch (r.kind) {
      case "message":
        out.push({ payload: view.slice(this.start, this.start + r.length), transport: "tcp", at });
        this.start += r.length;
        return true;
      case "incomplete":
        return false;
      case "too_large": {
        this.count("sip_too_large");
        // Skip the start line so the resynchronisation looks for the next message.
        const nl = view.indexOf(10, this.start);
        this.start = nl < 0 ? this.end : nl + 1;
        this.mode = "unknown";
        return true;
      }
      case "not_sip":
        this.count("tcp_resync");
        this.mode = "unknown";
        return true;
    }
  }

  private stepWs(view: Uint8Array, at: FrameRef, out: StreamMessage[]): boolean {
    const f = parseWsFrame(view, this.start, this.maxMessageBytes);
    if (f.kind === "incomplete") return false;
    if (f.kind === "invalid") {
      this.count("ws_invalid_frame");
      this.mode = "unknown";
      this.ws.reset();
      return true;
    }
    this.start += f.length;
    const ev = this.ws.push(f);
    if (ev.kind === "control") this.count("ws_control_frame");
    else if (ev.kind === "orphan_continuation") this.count("ws_orphan_continuation");
    else if (ev.kind === "message") {
      const sipAt = ev.compressed ? -1 : sipStartInDatagram(ev.payload);
      if (sipAt >= 0) out.push({ payload: ev.payload.subarray(sipAt), transport: "ws", at });
      else this.count(ev.compressed ? "ws_compressed" : "ws_not_sip");
    }
    return true;
  }

  private stepUnknown(view: Uint8Array): boolean {
    this.start = skipLineBreaks(view, this.start);
    if (this.start >= this.end) return false;
    const head = parseHttpHead(view, this.start);
    if (head.kind === "incomplete") return false;
    if (head.kind === "upgrade") {
      this.count("ws_upgrade");
      this.start += head.length;
      this.mode = "ws";
      this.ws.reset();
      return true;
    }
    if (head.kind === "http") {
      // Another HTTP exchange: skip its head (and body when present); SIP is looked for after it.
      this.count("http_head_skipped");
      this.start = Math.min(this.end, this.start + head.length);
      return true;
    }
    if (couldStartWsFrame(view[this.start] ?? 0xff)) {
      // Frames without the handshake in the capture: resume when one holds SIP, skip control frames.
      const f = parseWsFrame(view, this.start, this.maxMessageBytes);
      if (f.kind === "incomplete") return false;
      if (f.kind === "frame" && f.opcode >= 8) {
        this.count("ws_control_frame");
        this.start += f.length;
        return true;
      }
      if (
        f.kind === "frame" &&
        (f.opcode === WS_OPCODE.TEXT || f.opcode === WS_OPCODE.BINARY) &&
        sipStartInDatagram(f.payload) >= 0
      ) {
        this.mode = "ws";
        this.ws.reset();
        return true;
      }
    }
    const r = findStartLine(view, this.start);
    if (r.at > this.start) this.count("tcp_skipped_bytes", r.at - this.start);
    this.start = r.at;
    if (r.found) this.mode = "sip";
    return r.found;
  }
}
