import { expect, test } from "bun:test";
import { buildStreams, mediaEndpoints } from "./qos.ts";

const sdpMessage = (ip: string, port: number, formats: string, rtpmaps: string[]) => {
  const body = [
    "v=0",
    `o=- 1 1 IN IP4 ${ip}`,
    "s=-",
    `c=IN IP4 ${ip}`,
    "t=0 0",
    `m=audio ${port} RTP/AVP ${formats}`,
    ...rtpmaps,
    "",
  ].join("\r\n");
  return `SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP ${ip}\r\nCall-ID: q@x\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
};

test("mediaEndpoints: RTP and RTCP port with the clock of the first real codec (telephone-event skipped)", () => {
  const eps = mediaEndpoints([
    sdpMessage("192.0.2.1", 4000, "101 111", ["a=rtpmap:101 telephone-event/8000", "a=rtpmap:111 opus/48000/2"]),
    sdpMessage("192.0.2.2", 5000, "0", []),
  ]);
  expect(eps).toEqual([
    { ip: "192.0.2.1", port: 4000, clock_rate: 48000 },
    { ip: "192.0.2.1", port: 4001, clock_rate: 48000 },
    { ip: "192.0.2.2", port: 5000, clock_rate: 8000 }, // PCMU, static payload type 0 (RFC 3551)
    { ip: "192.0.2.2", port: 5001, clock_rate: 8000 },
  ]);
});

const rtcp = (ts: number, src: [string, number], dst: [string, number], jitter: number, ssrc = 0xdeadbeef) => ({
  proto: 5,
  ts_ms: ts,
  src_ip: src[0],
  src_port: src[1],
  dst_ip: dst[0],
  dst_port: dst[1],
  payload: JSON.stringify({ ssrc, report_blocks: [{ ia_jitter: jitter, fraction_lost: 0, packets_lost: 0 }] }),
});

test("RTCP jitter (RTP timestamp units, RFC 3550 §6.4.1) becomes ms with the SDP's clock, else 8 kHz assumed; agents' jitter is ms already", () => {
  const media = mediaEndpoints([sdpMessage("192.0.2.1", 4000, "111", ["a=rtpmap:111 opus/48000/2"])]);
  const streams = buildStreams(
    [
      rtcp(1, ["192.0.2.1", 4001], ["192.0.2.9", 6001], 480),
      rtcp(2, ["192.0.2.1", 4001], ["192.0.2.9", 6001], 96),
      rtcp(1, ["198.51.100.7", 7001], ["198.51.100.8", 7003], 12),
      {
        proto: 35,
        ts_ms: 3,
        src_ip: "10.0.0.1",
        src_port: 1,
        dst_ip: "10.0.0.2",
        dst_port: 2,
        payload: JSON.stringify({ jitter: 4.25, mos: 412 }),
      },
    ],
    media,
  );
  const [opus, unknown, agent] = streams;
  expect(opus).toMatchObject({ clock_rate: 48000, clock_rate_assumed: false, ssrc: String(0xdeadbeef) });
  expect(opus!.points.map((p) => p.jitter_ms)).toEqual([10, 2]);
  expect(opus!.summary.max_jitter_ms).toBe(10);
  expect(unknown).toMatchObject({ clock_rate: 8000, clock_rate_assumed: true });
  expect(unknown!.points[0]!.jitter_ms).toBe(1.5);
  expect(agent).toMatchObject({ clock_rate: null, clock_rate_assumed: false });
  expect(agent!.points[0]).toMatchObject({ jitter: 4.25, jitter_ms: 4.25, mos: 4.12 });
});

test("a stream is synthetic only when every one of its reports says so", () => {
  const agent = (ts: number, port: number, extra: Record<string, unknown>) => ({
    proto: 34,
    ts_ms: ts,
    src_ip: "10.0.0.1",
    src_port: port,
    dst_ip: "10.0.0.2",
    dst_port: 2,
    payload: JSON.stringify({ mos: 441, ...extra }),
  });
  const streams = buildStreams([
    agent(1, 1, { synthetic: true }),
    agent(2, 1, { synthetic: true }),
    agent(1, 3, { synthetic: true }),
    agent(2, 3, {}),
    agent(1, 5, { synthetic: "yes" }),
  ]);
  expect(streams.map((s) => [s.src_port, s.synthetic])).toEqual([
    [1, true],
    [3, false],
    [5, false],
  ]);
});
