import type { SipMessage } from "../sip/index.ts";
import type { HepPacket } from "./packet.ts";

/**
 * The ingest side of the live stream (docs/STREAM.md "Hand-over"): while somebody subscribes, the
 * HEP pipeline's tap copies each stored packet into one growing byte buffer as a compact record
 * (fixed header, the two address texts, the raw payload). Every hand-over tick the buffer is sealed
 * and leaves the ingest thread as a transferred ArrayBuffer; the main thread decodes the records it
 * actually sends (SIP parse, JSON) so the ingest thread does no more than a memcpy per packet.
 * Nobody subscribing costs nothing here: the tap is not set at all.
 * It sits in src/hep, below both of its users: the ingest thread writes the records, src/stream
 * (event.ts) reads them, and neither of those folders may import the other (docs/ARCHITECTURE.md).
 *
 * Record layout (little-endian), RECORD_HEADER bytes then the variable part:
 *   0 u32 record length   4 f64 timestamp (µs)   12 u32 capture id (HEP 0x000c)
 *  16 u16 src port       18 u16 dst port          20 u16 HEP protocol type (0x000b)
 *  22 u8 flags (bit 0: SIP parsed at ingest)      23 u8 src address length   24 u8 dst address length
 *  28 u32 payload length, then src address, dst address (ASCII) and payload bytes.
 */
export const RECORD_HEADER = 32;
export const FLAG_SIP_PARSED = 1;

/** A sealed capture buffer: `count` records in the first `length` bytes. */
export interface CaptureChunk {
  buffer: ArrayBuffer;
  length: number;
  count: number;
}

export interface StreamCaptureOptions {
  /** First buffer size in bytes (doubles as needed). */
  initialBytes?: number;
  /** Largest buffer of one tick: a record that does not fit is dropped and counted (bounded memory). */
  maxBytes?: number;
  /** Called once per record that did not fit (svc_stream_events_dropped_total{reason="capture_full"}). */
  onDrop?: () => void;
}

const DEFAULT_INITIAL = 1 << 20;
const DEFAULT_MAX = 64 << 20;

function writeAscii(bytes: Uint8Array, at: number, s: string, max: number): number {
  const n = Math.min(s.length, max);
  for (let i = 0; i < n; i++) bytes[at + i] = s.charCodeAt(i) & 0x7f;
  return n;
}

export class StreamCapture {
  private buf: ArrayBuffer;
  private bytes: Uint8Array;
  private view: DataView;
  private used = 0;
  private count = 0;
  private readonly spares: ArrayBuffer[] = [];
  private readonly initial: number;
  private readonly max: number;
  private readonly onDrop: (() => void) | undefined;

  constructor(opts: StreamCaptureOptions = {}) {
    this.initial = opts.initialBytes ?? DEFAULT_INITIAL;
    this.max = Math.max(this.initial, opts.maxBytes ?? DEFAULT_MAX);
    this.onDrop = opts.onDrop;
    this.buf = new ArrayBuffer(this.initial);
    this.bytes = new Uint8Array(this.buf);
    this.view = new DataView(this.buf);
  }

  /** The pipeline tap (src/ingest PacketTap): copies what a frame needs; `p.payload` is reused after the call. */
  readonly tap = (p: HepPacket, sip: SipMessage | undefined): void => {
    const payload = p.payload;
    const need = RECORD_HEADER + p.srcIp.length + p.dstIp.length + payload.length;
    if (this.used + need > this.bytes.length && !this.grow(this.used + need)) {
      this.onDrop?.();
      return;
    }
    const v = this.view;
    const at = this.used;
    v.setUint32(at, need, true);
    v.setFloat64(at + 4, p.timestampUs, true);
    v.setUint32(at + 12, p.captureId >>> 0, true);
    v.setUint16(at + 16, p.srcPort, true);
    v.setUint16(at + 18, p.dstPort, true);
    v.setUint16(at + 20, p.protoType, true);
    this.bytes[at + 22] = sip ? FLAG_SIP_PARSED : 0;
    let off = at + RECORD_HEADER;
    const s = writeAscii(this.bytes, off, p.srcIp, 255);
    this.bytes[at + 23] = s;
    off += s;
    const d = writeAscii(this.bytes, off, p.dstIp, 255);
    this.bytes[at + 24] = d;
    off += d;
    v.setUint32(at + 28, payload.length, true);
    this.bytes.set(payload, off);
    this.used = off + payload.length;
    this.count++;
  };

  /** Records since the last seal (undefined when none); a spare or new buffer takes over. */
  seal(): CaptureChunk | undefined {
    if (this.count === 0) return undefined;
    const chunk: CaptureChunk = { buffer: this.buf, length: this.used, count: this.count };
    const spare = this.spares.pop();
    this.reset(spare ?? new ArrayBuffer(this.initial));
    return chunk;
  }

  /** A sealed buffer handed back by its reader (kept for a later seal: no fresh buffer per tick). */
  giveBack(buffer: ArrayBuffer): void {
    if (this.spares.length < 2 && buffer.byteLength >= this.initial) this.spares.push(buffer);
  }

  /** Drops what was captured and not sealed (capture switched off). */
  clear(): void {
    this.used = 0;
    this.count = 0;
  }

  private reset(buffer: ArrayBuffer): void {
    this.buf = buffer;
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
    this.used = 0;
    this.count = 0;
  }

  private grow(need: number): boolean {
    if (need > this.max) return false;
    let size = this.bytes.length;
    while (size < need) size *= 2;
    size = Math.min(size, this.max);
    const next = new ArrayBuffer(size);
    new Uint8Array(next).set(this.bytes.subarray(0, this.used));
    this.buf = next;
    this.bytes = new Uint8Array(next);
    this.view = new DataView(next);
    return true;
  }
}
