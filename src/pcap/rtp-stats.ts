/**
 * RTP stream statistics of a capture (docs/ARCHITECTURE.md "PCAP import", docs/CALL-VIEW.md
 * "Computed from RTP"): packets received, expected and lost by RFC 3550 Appendix A.1/A.3
 * (extended highest sequence number − base + 1, minus received; duplicates and late packets count
 * as received, so lost can be negative), sequence errors, and the interarrival jitter of RFC 3550
 * §6.4.1 / A.8 (J += (|D| − J) / 16 in arrival order) in ms. Wireshark's RTP stream analysis
 * computes jitter the same way, so `tshark -z rtp,streams` agrees (the import test compares).
 */

export interface RtpHeader {
  payloadType: number;
  marker: boolean;
  seq: number;
  timestamp: number;
  ssrc: number;
}

/** RFC 3550 §5.1 fixed header, version 2; null for anything else or an RTCP packet (RFC 5761 §4: types 64..95 with the marker bit). */
export function parseRtpHeader(b: Uint8Array): RtpHeader | null {
  if (b.length < 12 || b[0]! >> 6 !== 2) return null;
  const pt = b[1]! & 0x7f;
  if (pt >= 64 && pt <= 95) return null;
  const cc = b[0]! & 0x0f;
  if (12 + cc * 4 > b.length) return null;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return {
    payloadType: pt,
    marker: (b[1]! & 0x80) !== 0,
    seq: dv.getUint16(2),
    timestamp: dv.getUint32(4),
    ssrc: dv.getUint32(8),
  };
}

/** RFC 3550 A.1: a gap this large is a jump, not loss; one this far behind is a late packet. */
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

export interface RtpStreamFigures {
  packets: number;
  expected: number;
  lost: number;
  /** Packets whose sequence number was not the highest so far + 1: gaps, late, duplicate or jumped. */
  seq_errors: number;
  /** RFC 3550 A.8 interarrival jitter after the last packet, ms. */
  jitter_ms: number;
  max_jitter_ms: number;
  /** Mean of the jitter after each packet (as Wireshark's "Mean Jitter"), ms. */
  mean_jitter_ms: number;
  first_us: number;
  last_us: number;
}

export class RtpStreamStats {
  private baseSeq = -1;
  private maxSeq = 0;
  private cycles = 0;
  private badSeq = SEQ_MOD + 1;
  private received = 0;
  private seqErrors = 0;
  private jitter = 0;
  private maxJitter = 0;
  private sumJitter = 0;
  private lastTransit: number | null = null;
  private firstUs = 0;
  private lastUs = 0;

  /** `clockRate` in Hz: the RTP timestamp unit of the stream's payload type. */
  constructor(readonly clockRate: number) {}

  add(h: RtpHeader, arrivalUs: number): void {
    if (this.baseSeq < 0) {
      this.restart(h.seq);
      this.firstUs = arrivalUs;
    } else {
      const udelta = (h.seq - this.maxSeq + SEQ_MOD) % SEQ_MOD;
      if (udelta !== 1) this.seqErrors++;
      if (udelta === 0) {
        // a duplicate: received again, as A.1 counts it
      } else if (udelta < MAX_DROPOUT) {
        if (h.seq < this.maxSeq) this.cycles += SEQ_MOD;
        this.maxSeq = h.seq;
      } else if (udelta <= SEQ_MOD - MAX_MISORDER) {
        // A very large jump: the source restarted if the next packet follows it (A.1).
        if (h.seq === this.badSeq) this.restart(h.seq);
        else {
          this.badSeq = (h.seq + 1) % SEQ_MOD;
          return;
        }
      }
    }
    this.received++;
    this.lastUs = arrivalUs;
    // A.8: transit in timestamp units; arrival kept fractional, as Wireshark's float arithmetic does.
    const transit = (arrivalUs / 1e6) * this.clockRate - h.timestamp;
    if (this.lastTransit !== null) {
      let d = transit - this.lastTransit;
      // The RTP timestamp wraps at 2^32.
      if (d > 2 ** 31) d -= 2 ** 32;
      else if (d < -(2 ** 31)) d += 2 ** 32;
      this.jitter += (Math.abs(d) - this.jitter) / 16;
    }
    this.lastTransit = transit;
    const ms = this.jitter / (this.clockRate / 1000);
    if (ms > this.maxJitter) this.maxJitter = ms;
    this.sumJitter += ms;
  }

  private restart(seq: number): void {
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.cycles = 0;
    this.badSeq = SEQ_MOD + 1;
    this.received = 0;
  }

  figures(): RtpStreamFigures {
    const expected = this.baseSeq < 0 ? 0 : this.cycles + this.maxSeq - this.baseSeq + 1;
    const r3 = (x: number) => Math.round(x * 1000) / 1000;
    return {
      packets: this.received,
      expected,
      lost: expected - this.received,
      seq_errors: this.seqErrors,
      jitter_ms: r3(this.jitter / (this.clockRate / 1000)),
      max_jitter_ms: r3(this.maxJitter),
      mean_jitter_ms: this.received ? r3(this.sumJitter / this.received) : 0,
      first_us: this.firstUs,
      last_us: this.lastUs,
    };
  }
}
