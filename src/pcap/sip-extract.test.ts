import { describe, expect, test } from "bun:test";
import { concat } from "./bytes.ts";
import { ETHERTYPE, LINKTYPE } from "./link.ts";
import { extractSipMessages, type CapturedSip } from "./sip-extract.ts";
import {
  decodeText,
  ethernet,
  ipv4,
  ipv6,
  ipv6Fragment,
  PcapngBuilder,
  pcapFile,
  sctp,
  sipRequest,
  sipResponse,
  sll2,
  tcp,
  text,
  udp,
  wsFrame,
  type TestPacket,
} from "./testing.ts";

const A = "10.0.0.1";
const B = "10.0.0.2";
const T0 = 1_600_000_000_000_000;

/** Ethernet + IPv4 + UDP frames, one per payload, 1 ms apart. */
const udp4 = (payload: Uint8Array, src = A, dst = B, sport = 5060, dport = 5060) =>
  ethernet(ETHERTYPE.IPV4, ipv4({ src, dst, protocol: 17 }, udp(src, dst, sport, dport, payload)));
const tcp4 = (seq: number, payload: string | Uint8Array, from: "a" | "b" = "a", syn = false) => {
  const [src, dst, sport, dport] = from === "a" ? [A, B, 40000, 5060] : [B, A, 5060, 40000];
  return ethernet(
    ETHERTYPE.IPV4,
    ipv4(
      { src, dst, protocol: 6 },
      tcp({ srcPort: sport, dstPort: dport, seq, syn }, typeof payload === "string" ? text(payload) : payload),
    ),
  );
};
const frames = (datas: Uint8Array[]): TestPacket[] => datas.map((data, i) => ({ tsUs: T0 + i * 1000, data }));

/** frame@transport:first line, for compact assertions. */
const brief = (m: CapturedSip) => `${m.frameNumber}@${m.transport}:${decodeText(m.payload).split("\r\n")[0]}`;

describe("extractSipMessages: UDP", () => {
  test("one datagram is one message; RTP, STUN and keep-alives are counted and skipped", () => {
    const invite = sipRequest("INVITE", "call-1", "v=0\r\n");
    const rtp = Uint8Array.of(0x80, 0x08, 0x12, 0x34, ...new Array<number>(168).fill(0xd5));
    const stun = Uint8Array.of(0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42, ...new Array<number>(12).fill(1));
    const r = extractSipMessages(
      pcapFile(
        frames([
          udp4(text(invite), A, B, 5062, 5060),
          udp4(rtp, A, B, 10000, 20000),
          udp4(stun),
          udp4(text("\r\n\r\n")),
          udp4(text(sipResponse(200, "call-1")), B, A),
        ]),
      ),
    );
    expect(r.error).toBeNull();
    expect(r.format).toBe("pcap");
    expect(r.messages).toHaveLength(2);
    expect(r.messages[0]).toEqual({
      timestampUs: T0,
      srcIp: A,
      dstIp: B,
      srcPort: 5062,
      dstPort: 5060,
      ipFamily: 4,
      transport: "udp",
      payload: text(invite),
      frameNumber: 1,
    });
    expect(brief(r.messages[1] as CapturedSip)).toBe("5@udp:SIP/2.0 200 Whatever");
    expect(r.stats).toMatchObject({ frames: 5, sip_messages: 2, udp_not_sip: 2, keepalive: 1 });
  });

  test("IPv6 fragments, a VLAN-tagged IPv4 frame and an IP-in-IP tunnel", () => {
    const big = text(sipRequest("MESSAGE", "frag", "x".repeat(1500)));
    const datagram = udp("2001:db8::1", "2001:db8::2", 5060, 5060, big);
    const cut = 1232; // a multiple of 8
    const frag = (from: number, to: number, more: boolean) =>
      ethernet(
        ETHERTYPE.IPV6,
        ipv6(
          { src: "2001:db8::1", dst: "2001:db8::2", nextHeader: 44 },
          concat([ipv6Fragment(17, from, more, 99), datagram.subarray(from, to)]),
        ),
      );
    const vlan = ethernet(
      ETHERTYPE.IPV4,
      ipv4({ src: A, dst: B, protocol: 17 }, udp(A, B, 5060, 5060, text(sipRequest("OPTIONS", "vlan")))),
      [0x88a8, 0x8100],
    );
    const tunnel = ethernet(
      ETHERTYPE.IPV4,
      ipv4(
        { src: "192.0.2.1", dst: "192.0.2.2", protocol: 4 },
        ipv4(
          { src: "172.16.0.1", dst: "172.16.0.2", protocol: 17 },
          udp("172.16.0.1", "172.16.0.2", 5080, 5060, text(sipRequest("BYE", "ipip"))),
        ),
      ),
    );
    const r = extractSipMessages(
      pcapFile(frames([frag(cut, datagram.length, false), vlan, frag(0, cut, true), tunnel])),
    );
    expect(r.messages.map(brief)).toEqual([
      "2@udp:OPTIONS sip:bob@example.com SIP/2.0",
      "3@udp:MESSAGE sip:bob@example.com SIP/2.0",
      "4@udp:BYE sip:bob@example.com SIP/2.0",
    ]);
    expect(r.messages[1]).toMatchObject({ srcIp: "2001:db8::1", ipFamily: 6, timestampUs: T0 + 2000, payload: big });
    expect(r.messages[2]).toMatchObject({ srcIp: "172.16.0.1", dstIp: "172.16.0.2", srcPort: 5080 });
  });
});

describe("extractSipMessages: TCP", () => {
  const a1 = sipRequest("INVITE", "tcp-1", "v=0\r\no=- 1 1 IN IP4 10.0.0.1\r\n");
  const a2 = sipRequest("ACK", "tcp-1");
  const c = sipRequest("MESSAGE", "tcp-3", "z".repeat(90));
  const d = sipRequest("BYE", "tcp-4");
  const resp = sipResponse(200, "tcp-1");

  test("two messages in one segment, one message over three segments, retransmission, out of order, keep-alive", () => {
    let seq = 1001;
    const next = (s: string) => {
      const at = seq;
      seq += text(s).length;
      return at;
    };
    const s1 = next(a1 + a2);
    const ka = next("\r\n\r\n");
    const c1 = next(c.slice(0, 40));
    const c2 = next(c.slice(40, 150));
    const c3 = next(c.slice(150));
    const d1 = next(d.slice(0, 60));
    const d2 = next(d.slice(60));
    const r = extractSipMessages(
      pcapFile(
        frames([
          tcp4(1000, "", "a", true), // 1 SYN
          tcp4(s1, a1 + a2), // 2: two messages
          tcp4(ka, "\r\n\r\n"), // 3: keep-alive (RFC 5626)
          tcp4(c1, c.slice(0, 40)), // 4
          tcp4(c2, c.slice(40, 150)), // 5
          tcp4(c2, c.slice(40, 150)), // 6: retransmission
          tcp4(c3, c.slice(150)), // 7: completes MESSAGE
          tcp4(d2, d.slice(60)), // 8: out of order
          tcp4(5000, resp, "b"), // 9: the other direction, no SYN seen
          tcp4(d1, d.slice(0, 60)), // 10: fills the hole, completes BYE
          tcp4(d1, d.slice(0, 60)), // 11: retransmission after the fact
        ]),
      ),
    );
    expect(r.messages.map(brief)).toEqual([
      "2@tcp:INVITE sip:bob@example.com SIP/2.0",
      "2@tcp:ACK sip:bob@example.com SIP/2.0",
      "7@tcp:MESSAGE sip:bob@example.com SIP/2.0",
      "9@tcp:SIP/2.0 200 Whatever",
      "10@tcp:BYE sip:bob@example.com SIP/2.0",
    ]);
    expect(r.messages.map((m) => decodeText(m.payload))).toEqual([a1, a2, c, resp, d]);
    expect(r.messages[3]).toMatchObject({ srcIp: B, dstIp: A, srcPort: 5060, dstPort: 40000, timestampUs: T0 + 8000 });
    expect(r.stats).toMatchObject({ tcp_retransmission: 2, tcp_out_of_order: 1, keepalive: 1 });
  });

  test("a capture starting inside a message resynchronises on the next start line", () => {
    const r = extractSipMessages(
      pcapFile(frames([tcp4(77, `o=- 1 1 IN IP4 x\r\n\r\n${d}`), tcp4(77 + 20 + text(d).length, a2)])),
    );
    expect(r.messages.map(brief)).toEqual([
      "1@tcp:BYE sip:bob@example.com SIP/2.0",
      "2@tcp:ACK sip:bob@example.com SIP/2.0",
    ]);
    expect(r.stats.tcp_skipped_bytes).toBe(20); // the body line and the empty line
  });

  test("a hole that never fills: what follows is still decoded at the end, with its own frame", () => {
    const r = extractSipMessages(pcapFile(frames([tcp4(1, a2), tcp4(1 + text(a2).length + 50, d)])));
    expect(r.messages.map(brief)).toEqual([
      "1@tcp:ACK sip:bob@example.com SIP/2.0",
      "2@tcp:BYE sip:bob@example.com SIP/2.0",
    ]);
    expect(r.stats).toMatchObject({ tcp_gap: 1, tcp_out_of_order: 1 });
  });

  test("a non-SIP TCP stream produces nothing and keeps no backlog", () => {
    const junk = new Uint8Array(3000).map((_, i) => (i * 7919) & 0xff);
    const r = extractSipMessages(
      pcapFile(frames([tcp4(1, junk), tcp4(3001, junk), tcp4(6001, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")])),
    );
    expect(r.messages).toEqual([]);
    expect(r.stats.sip_messages).toBeUndefined();
  });
});

describe("extractSipMessages: SIP over WebSocket (RFC 7118)", () => {
  const mask = Uint8Array.of(1, 2, 3, 4);
  const invite = sipRequest("INVITE", "ws-1", "v=0\r\n");
  const ok = sipResponse(200, "ws-1");

  test("handshake, masked client frames split over segments, fragmented server message with a ping", () => {
    const get =
      "GET / HTTP/1.1\r\nHost: proxy\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: sip\r\nSec-WebSocket-Version: 13\r\n\r\n";
    const switching =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: sip\r\n\r\n";
    const clientFrame = wsFrame({ payload: text(invite), mask });
    const okBytes = text(ok);
    const serverBytes = concat([
      wsFrame({ payload: okBytes.subarray(0, 10), fin: false }),
      wsFrame({ payload: new Uint8Array(0), opcode: 9 }),
      wsFrame({ payload: okBytes.subarray(10), opcode: 0 }),
    ]);
    const g = text(get).length;
    const r = extractSipMessages(
      pcapFile(
        frames([
          tcp4(1, get), // 1
          tcp4(1, switching, "b"), // 2
          tcp4(1 + g, clientFrame.subarray(0, 50)), // 3
          tcp4(1 + g + 50, clientFrame.subarray(50)), // 4 completes the INVITE
          tcp4(1 + text(switching).length, serverBytes, "b"), // 5
        ]),
      ),
    );
    expect(r.messages.map(brief)).toEqual(["4@ws:INVITE sip:bob@example.com SIP/2.0", "5@ws:SIP/2.0 200 Whatever"]);
    expect(r.messages.map((m) => decodeText(m.payload))).toEqual([invite, ok]);
    expect(r.stats).toMatchObject({ ws_upgrade: 2, ws_control_frame: 1 });
  });

  test("frames without the handshake in the capture are still recognised", () => {
    const bytes = concat([
      wsFrame({ payload: new Uint8Array(0), opcode: 10, mask }),
      wsFrame({ payload: text(invite), mask }),
      wsFrame({ payload: text("not sip"), mask }),
    ]);
    const r = extractSipMessages(pcapFile(frames([tcp4(500, bytes)])));
    expect(r.messages.map(brief)).toEqual(["1@ws:INVITE sip:bob@example.com SIP/2.0"]);
    expect(r.stats).toMatchObject({ ws_not_sip: 1 });
  });
});

describe("extractSipMessages: SCTP (RFC 4168)", () => {
  test("a message fragmented over DATA chunks, bundled chunks, a retransmitted fragment", () => {
    const invite = text(sipRequest("INVITE", "sctp-1", "v=0\r\n".repeat(50)));
    const ack = text(sipRequest("ACK", "sctp-1"));
    const bye = text(sipRequest("BYE", "sctp-1"));
    const sctp4 = (chunks: Parameters<typeof sctp>[2], extra: Uint8Array[] = []) =>
      sll2(ETHERTYPE.IPV4, ipv4({ src: A, dst: B, protocol: 132 }, sctp(5060, 5060, chunks, extra)));
    const sack = Uint8Array.of(3, 0, 0, 16, ...new Array<number>(12).fill(0));
    const file = pcapFile(
      frames([
        sctp4([{ tsn: 10, payload: invite.subarray(0, 100), end: false }]),
        sctp4([{ tsn: 10, payload: invite.subarray(0, 100), end: false }]), // retransmission
        sctp4([{ tsn: 11, payload: invite.subarray(100), begin: false }]),
        sctp4(
          [
            { tsn: 12, payload: ack },
            { tsn: 13, payload: text("not sip"), streamId: 1 },
            { tsn: 14, payload: bye, ppid: 46 },
          ],
          [sack],
        ),
      ]),
      { linkType: LINKTYPE.LINUX_SLL2 },
    );
    const r = extractSipMessages(file);
    expect(r.messages.map(brief)).toEqual([
      "3@sctp:INVITE sip:bob@example.com SIP/2.0",
      "4@sctp:ACK sip:bob@example.com SIP/2.0",
      "4@sctp:BYE sip:bob@example.com SIP/2.0",
    ]);
    expect(r.messages[0]?.payload).toEqual(invite);
    expect(r.stats).toMatchObject({ sctp_duplicate_fragment: 1, sctp_not_sip: 1 });
  });
});

describe("extractSipMessages: files", () => {
  test("pcapng with two interfaces of different link types and resolutions", () => {
    const msg = text(sipRequest("OPTIONS", "ng"));
    const raw = ipv4({ src: A, dst: B, protocol: 17 }, udp(A, B, 5060, 5060, msg));
    const file = new PcapngBuilder()
      .interface(LINKTYPE.ETHERNET)
      .interface(LINKTYPE.RAW, { tsresol: 9 })
      .packet(1, BigInt(T0) * 1000n + 5n, raw)
      .packet(0, BigInt(T0 + 7), ethernet(ETHERTYPE.IPV4, raw))
      .bytes();
    const r = extractSipMessages(file);
    expect(r.format).toBe("pcapng");
    expect(r.messages.map((m) => [m.frameNumber, m.timestampUs])).toEqual([
      [1, T0],
      [2, T0 + 7],
    ]);
  });

  test("not a capture: no messages and the reason", () => {
    const r = extractSipMessages(text("INVITE sip:a SIP/2.0\r\n\r\n"));
    expect(r).toMatchObject({ messages: [], format: null, error: { reason: "unknown_magic" } });
  });

  test("a cut-short file gives the messages before the cut and the reason", () => {
    const file = pcapFile(frames([udp4(text(sipRequest("OPTIONS", "1"))), udp4(text(sipRequest("OPTIONS", "2")))]));
    const r = extractSipMessages(file.subarray(0, file.length - 10));
    expect(r.messages).toHaveLength(1);
    expect(r.error?.reason).toBe("truncated_record");
  });
});
