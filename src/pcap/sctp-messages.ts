/**
 * SCTP user messages from DATA chunks (RFC 9260 §6.9): an unfragmented chunk (B and E set) is a
 * message; a fragmented one spans consecutive TSNs on one stream from the B chunk to the E chunk.
 * A repeated TSN inside a message being joined is a retransmission and is ignored; a missing one
 * abandons the message.
 */
import type { SctpDataChunk } from "./transport.ts";
import { concat } from "./bytes.ts";

export type SctpStat = "sctp_duplicate_fragment" | "sctp_fragment_lost" | "sctp_too_large";

interface PartialMessage {
  firstTsn: number;
  nextTsn: number;
  parts: Uint8Array[];
  bytes: number;
}

export class SctpMessageAssembler {
  private readonly partial = new Map<string, PartialMessage>();

  constructor(
    private readonly count: (stat: SctpStat) => void,
    private readonly maxMessageBytes: number,
  ) {}

  /** The whole user message when `chunk` completes one, else null. */
  push(association: string, chunk: SctpDataChunk): Uint8Array | null {
    if (chunk.begin && chunk.end) return chunk.payload;
    const key = `${association}|${chunk.streamId}|${chunk.unordered ? "u" : "o"}`;
    if (chunk.begin) {
      const current = this.partial.get(key);
      if (current !== undefined && current.firstTsn === chunk.tsn) {
        this.count("sctp_duplicate_fragment");
        return null;
      }
      if (current !== undefined) this.count("sctp_fragment_lost");
      this.partial.set(key, {
        firstTsn: chunk.tsn,
        nextTsn: (chunk.tsn + 1) >>> 0,
        parts: [chunk.payload],
        bytes: chunk.payload.length,
      });
      return null;
    }
    const entry = this.partial.get(key);
    if (entry === undefined) {
      this.count("sctp_fragment_lost");
      return null;
    }
    const d = (chunk.tsn - entry.nextTsn) | 0;
    if (d < 0) {
      this.count("sctp_duplicate_fragment");
      return null;
    }
    if (d > 0) {
      this.count("sctp_fragment_lost");
      this.partial.delete(key);
      return null;
    }
    entry.parts.push(chunk.payload);
    entry.bytes += chunk.payload.length;
    entry.nextTsn = (entry.nextTsn + 1) >>> 0;
    if (entry.bytes > this.maxMessageBytes) {
      this.count("sctp_too_large");
      this.partial.delete(key);
      return null;
    }
    if (!chunk.end) return null;
    this.partial.delete(key);
    return concat(entry.parts);
  }
}
