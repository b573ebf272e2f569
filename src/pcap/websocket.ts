/**
 * SIP over WebSocket as seen on the wire (RFC 7118): an HTTP/1.1 Upgrade handshake (RFC 6455 §4),
 * then frames (§5.2) whose messages each carry exactly one SIP message (RFC 7118 §5). Client frames
 * are masked (§5.3); messages may be fragmented (§5.4) with control frames in between (§5.5).
 */
import { concat, u16be as u16, u32be as u32 } from "./bytes.ts";
import { headerBlockEnd } from "./sip-framing.ts";

export type WsFrameResult =
  | { kind: "frame"; fin: boolean; rsv: number; opcode: number; payload: Uint8Array; length: number }
  | { kind: "incomplete" }
  | { kind: "invalid" };

export const WS_OPCODE = { CONTINUATION: 0, TEXT: 1, BINARY: 2, CLOSE: 8, PING: 9, PONG: 10 } as const;
const VALID_OPCODES = new Set<number>(Object.values(WS_OPCODE));

/** Could this byte open a frame? Never true for SIP text: every letter has an RSV bit set. */
export function couldStartWsFrame(byte0: number): boolean {
  return (byte0 & 0x70) === 0 && VALID_OPCODES.has(byte0 & 0x0f);
}

/** One frame at `start`; the payload is a fresh copy, unmasked. */
export function parseWsFrame(buf: Uint8Array, start: number, maxPayload: number): WsFrameResult {
  const b0 = buf[start];
  const b1 = buf[start + 1];
  if (b0 === undefined || b1 === undefined) return { kind: "incomplete" };
  const opcode = b0 & 0x0f;
  if (!VALID_OPCODES.has(opcode)) return { kind: "invalid" };
  const fin = (b0 & 0x80) !== 0;
  let header = 2;
  let length = b1 & 0x7f;
  if (length === 126) {
    header = 4;
    if (buf.length < start + header) return { kind: "incomplete" };
    length = u16(buf, start + 2);
  } else if (length === 127) {
    header = 10;
    if (buf.length < start + header) return { kind: "incomplete" };
    if (u32(buf, start + 2) !== 0) return { kind: "invalid" };
    length = u32(buf, start + 6);
  }
  // Control frames are never fragmented and carry at most 125 bytes (§5.5).
  if (opcode >= 8 && (!fin || length > 125)) return { kind: "invalid" };
  if (length > maxPayload) return { kind: "invalid" };
  const masked = (b1 & 0x80) !== 0;
  const maskAt = start + header;
  if (masked) header += 4;
  if (buf.length < start + header + length) return { kind: "incomplete" };
  const payload = buf.slice(start + header, start + header + length);
  if (masked) for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (buf[maskAt + (i & 3)] ?? 0);
  return { kind: "frame", fin, rsv: (b0 >> 4) & 7, opcode, payload, length: header + length };
}

export type HttpHeadResult =
  | { kind: "upgrade"; length: number }
  | { kind: "http"; length: number }
  | { kind: "incomplete" }
  | { kind: "not_http" };

const latin1 = new TextDecoder("latin1");
const startsWithAscii = (buf: Uint8Array, start: number, text: string) => {
  const n = Math.min(text.length, buf.length - start);
  for (let i = 0; i < n; i++) if (buf[start + i] !== text.charCodeAt(i)) return false;
  return true;
};

/**
 * An HTTP request or response head at `start`. "upgrade": a WebSocket handshake (a request with
 * "Upgrade: websocket", or a 101 response); "http": any other head, with its body length added so the
 * caller can skip it.
 */
export function parseHttpHead(buf: Uint8Array, start: number): HttpHeadResult {
  const isRequest = startsWithAscii(buf, start, "GET ");
  if (!isRequest && !startsWithAscii(buf, start, "HTTP/1.")) return { kind: "not_http" };
  const end = headerBlockEnd(buf, start);
  if (end === -1) return { kind: "incomplete" };
  if (end === -2) return { kind: "not_http" };
  const head = latin1.decode(buf.subarray(start, end));
  const upgrade = /^upgrade[ \t]*:[ \t]*websocket[ \t]*\r?$/im.test(head);
  if (upgrade && (isRequest || /^HTTP\/1\.\d 101\b/.test(head))) return { kind: "upgrade", length: end - start };
  const contentLength = /^content-length[ \t]*:[ \t]*(\d+)/im.exec(head)?.[1];
  return { kind: "http", length: end - start + (contentLength === undefined ? 0 : Number(contentLength)) };
}

export type WsMessageEvent =
  | { kind: "message"; payload: Uint8Array; compressed: boolean }
  | { kind: "partial" }
  | { kind: "control"; opcode: number }
  | { kind: "orphan_continuation" };

/** Joins fragmented data frames into messages (RFC 6455 §5.4). */
export class WsMessageAssembler {
  private parts: Uint8Array[] | null = null;
  private compressed = false;
  /** Unfinished messages abandoned because a new one started. */
  abandoned = 0;

  push(frame: { fin: boolean; rsv: number; opcode: number; payload: Uint8Array }): WsMessageEvent {
    if (frame.opcode >= 8) return { kind: "control", opcode: frame.opcode };
    if (frame.opcode !== WS_OPCODE.CONTINUATION) {
      if (this.parts !== null) this.abandoned++;
      this.parts = [];
      // RSV1 on the first frame marks a permessage-deflate message (RFC 7692 §6).
      this.compressed = (frame.rsv & 4) !== 0;
    } else if (this.parts === null) {
      return { kind: "orphan_continuation" };
    }
    this.parts.push(frame.payload);
    if (!frame.fin) return { kind: "partial" };
    const parts = this.parts;
    this.parts = null;
    const payload = parts.length === 1 ? (parts[0] ?? new Uint8Array(0)) : concat(parts);
    return { kind: "message", payload, compressed: this.compressed };
  }

  reset(): void {
    this.parts = null;
  }
}
