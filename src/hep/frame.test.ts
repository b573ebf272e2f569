import { describe, expect, test } from "bun:test";
import { decodeHep, encodeHep3, hepFrameLength } from "./index.ts";

const hex = (s: string): Uint8Array => Uint8Array.from(s.trim().split(/\s+/), (b) => parseInt(b, 16));
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

// Two hand-written frames: a 10-octet HEP3 packet and an 8-octet EEP3 packet (chunks are not looked at).
const A = hex("48 45 50 33 00 0a 01 02 03 04");
const B = hex("45 45 50 33 00 08 ff ff");

describe("hepFrameLength", () => {
  test.each<[string, Uint8Array, number, number | "need_more" | "invalid"]>([
    ["a whole HEP3 frame", A, 0, 10],
    ["a whole EEP3 frame", B, 0, 8],
    ["the second of two back-to-back frames", concat(A, B), 10, 8],
    ["the first frame when more follows", concat(A, B.subarray(0, 3)), 0, 10],
    ["nothing buffered", A, 10, "need_more"],
    ["one octet of the id", A.subarray(0, 1), 0, "need_more"],
    ["the id without the length", A.subarray(0, 4), 0, "need_more"],
    ["one octet of the length", A.subarray(0, 5), 0, "need_more"],
    ["the body not all there", A.subarray(0, 9), 0, "need_more"],
    ["a minimal 6-octet packet", hex("48 45 50 33 00 06"), 0, 6],
    ["garbage first octet", hex("47 45 50 33 00 0a"), 0, "invalid"],
    ["garbage detected before the header is complete", hex("48 58"), 0, "invalid"],
    ['"HEP2"', hex("48 45 50 32 00 0a"), 0, "invalid"],
    ["a HEP v2 packet (no total length to frame by)", hex("02 10 02 11 13 c4 13 c4"), 0, "invalid"],
    ["declared length below the header size", hex("48 45 50 33 00 05 00"), 0, "invalid"],
    ["an offset past the end", A, 11, "invalid"],
  ])("%s", (_name, buf, offset, expected) => {
    expect(hepFrameLength(buf, offset)).toBe(expected);
  });

  test("splits a stream delivered in arbitrary pieces back into the sent packets", () => {
    const packets = Array.from({ length: 50 }, (_, i) =>
      encodeHep3({
        srcIp: "10.0.0.1",
        dstIp: "10.0.0.2",
        srcPort: i,
        dstPort: 5060,
        protoType: 1,
        payload: "x".repeat(1 + ((i * 37) % 900)),
      }),
    );
    const stream = concat(...packets);
    let seed = 99;
    const piece = () => 1 + ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 700);

    // A receiver loop as the TCP listener will run it: append, then take every complete frame.
    let pending: Uint8Array = new Uint8Array(0);
    const received: number[] = [];
    for (let at = 0; at < stream.length; ) {
      const end = Math.min(stream.length, at + piece());
      pending = concat(pending, stream.subarray(at, end));
      at = end;
      let offset = 0;
      for (;;) {
        const n = hepFrameLength(pending, offset);
        if (n === "invalid") throw new Error(`invalid frame at ${offset}`);
        if (n === "need_more") break;
        const r = decodeHep(pending.subarray(offset, offset + n));
        if (!r.ok) throw new Error(r.reason);
        received.push(r.value.srcPort);
        offset += n;
      }
      pending = pending.slice(offset);
    }
    expect(received).toEqual(packets.map((_, i) => i));
    expect(pending.length).toBe(0);
  });
});
