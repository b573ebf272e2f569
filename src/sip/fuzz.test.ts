/**
 * Robustness: mutated valid messages and random bytes never make the SIP code throw, and what
 * parses keeps its invariants. Seeded, so a failure names the seed and iteration to replay.
 */
import { describe, expect, test } from "bun:test";
import { decodeSipMessage } from "./decoded.ts";
import { parseSip } from "./parse.ts";
import { parseSdp, sipSdp } from "./sdp.ts";
import { SIP_PARSE_REASONS, type SipParseOptions } from "./types.ts";
import { seeded } from "../../test/fixtures/seeded.ts";

const enc = new TextEncoder();
const SDP =
  "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=rtcp:4001 IN IP4 192.0.2.2\r\na=sendonly\r\n";
const SEEDS = [
  `INVITE sip:+4930123@[2001:db8::1]:5060;user=phone SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1, SIP/2.0/TCP [::1];branch=z9hG4bK2\r\nFrom: "A, \\"B\\"" <sip:a@example.com>;tag=1\r\nTo: tel:+123;tag=2\r\nCall-ID: fz@192.0.2.1\r\nCSeq: 1 INVITE\r\nContact: <sip:a@192.0.2.1>;expires=60, *\r\nP-Asserted-Identity: <tel:+1>\r\nX-CID: c\r\nContent-Type: application/sdp\r\nContent-Length: ${SDP.length}\r\n\r\n${SDP}`,
  `SIP/2.0 200 OK\r\nv: SIP/2.0/UDP h;branch=x\r\nf: <sip:a@b>;tag=1\r\nt: b <sip:b@c>;tag=2\r\ni: x\r\nCSeq: 2 REGISTER\r\nm: *\r\nSubject: folded\r\n  line\r\nc: multipart/mixed;boundary=bb\r\nl: 200\r\n\r\n--bb\r\nContent-Type: application/isup\r\n\r\n\x01\x02\r\n--bb\r\nContent-Type: application/sdp\r\n\r\n${SDP}\r\n--bb--\r\n`,
  "OPTIONS sip:h SIP/2.0\nCall-ID: lf\nCSeq: 1 OPTIONS\nMax-Forwards: 70\nExpires: 10\n\n",
];
const SPECIAL = [13, 10, 32, 9, 34, 60, 62, 59, 44, 58, 64, 91, 93, 92, 61, 0, 255, 0xc3, 0x2f, 0x2a];
const OPTS: SipParseOptions = { customHeaders: ["X-CID", "Subject", "s"], correlationHeaders: ["X-Missing", "X-CID"] };

function mutate(rand: () => number, seeds: Uint8Array[]): Uint8Array {
  const pick = (n: number) => Math.floor(rand() * n);
  const base = seeds[pick(seeds.length)]!;
  let b = Array.from(base);
  const edits = 1 + pick(6);
  for (let e = 0; e < edits; e++) {
    const at = pick(b.length + 1);
    switch (pick(7)) {
      case 0:
        if (b.length > 0) b[Math.min(at, b.length - 1)] = pick(256);
        break;
      case 1:
        b.splice(at, 0, SPECIAL[pick(SPECIAL.length)]!);
        break;
      case 2:
        b.splice(at, 1 + pick(20));
        break;
      case 3:
        b = b.slice(0, at);
        break;
      case 4:
        b.splice(at, 0, ...b.slice(pick(b.length), pick(b.length)));
        break;
      case 5:
        b.splice(at, 0, ...Array.from(seeds[pick(seeds.length)]!).slice(pick(100)));
        break;
      default:
        b = Array.from({ length: pick(300) }, () => pick(256));
    }
  }
  return new Uint8Array(b);
}

describe("fuzz", () => {
  const seeds = SEEDS.map((s) => enc.encode(s));
  test.each([1, 2, 3, 4])("seed %i: 5000 mutated payloads never throw and keep invariants", (seed) => {
    const rand = seeded(seed);
    const reasons = new Set<string>(SIP_PARSE_REASONS);
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const p = mutate(rand, seeds);
      const where = `seed ${seed} iteration ${i}`;
      let r: ReturnType<typeof parseSip>;
      try {
        r = parseSip(p, OPTS);
        const d = decodeSipMessage(p, OPTS);
        JSON.stringify(d);
        parseSdp(p);
        if (r.ok) sipSdp(p, r.value);
      } catch (err) {
        throw new Error(`${where}: threw ${String(err)}`);
      }
      seen.add(r.ok ? "ok" : r.reason);
      if (!r.ok) {
        expect(reasons.has(r.reason), where).toBe(true);
        continue;
      }
      const m = r.value;
      expect(m.bodyOffset + m.bodyLength <= p.length && m.bodyOffset >= 0 && m.bodyLength >= 0, where).toBe(true);
      expect(m.callId.length > 0 && Number.isInteger(m.cseq) && m.cseq >= 0, where).toBe(true);
      expect(m.headerCount >= 2 && m.viaCount >= 0, where).toBe(true);
    }
    // The mutations must reach both outcomes, or the fuzz proves little.
    expect(seen.has("ok")).toBe(true);
    expect(seen.size).toBeGreaterThan(3);
  });
});
