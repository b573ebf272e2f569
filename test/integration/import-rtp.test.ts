/**
 * PCAP import of a call's media (docs/ARCHITECTURE.md "PCAP import", docs/CALL-VIEW.md "Computed
 * from RTP"): a capture we build with a G.711 call, its RTP (a few packets lost, two pairs
 * reordered, known arrival jitter) and RTCP receiver reports on RTP port + 1. The import stores the
 * RTCP as HEP 5 rows and one HEP 34 report per RTP stream (`"source": "rtp"`), the call's QoS view
 * lists both, and the stream's loss and jitter agree with tshark's `-z rtp,streams` within 1 %.
 * The time shift of override_to_current_time is reported in words.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startWithApi, type Api } from "./export-helpers.ts";

const enc = new TextEncoder();
const CALL_ID = "rtp-import-call@test";
const A = { ip: "192.0.2.10", sip: 5060, rtp: 40000 };
const B = { ip: "192.0.2.20", sip: 5060, rtp: 50000 };
const PACKETS = 400;
const LOST = new Set([50, 51, 200, 333]);
const SWAPPED = [100, 250];
/** Deterministic arrival offsets 0..9 ms: the stream's jitter. */
const offsetUs = (i: number) => ((i * 7919) % 10) * 1000 + ((i * 104729) % 997);

function sdp(ip: string, port: number): string {
  return `v=0\r\no=- 1 1 IN IP4 ${ip}\r\ns=-\r\nc=IN IP4 ${ip}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n`;
}

function sip(startLine: string, cseq: string, body = ""): string {
  return (
    `${startLine}\r\nVia: SIP/2.0/UDP ${A.ip}:5060;branch=z9hG4bK-rtp1\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:bob@example.com>${startLine.startsWith("SIP/") ? ";tag=b1" : ""}\r\n` +
    `Call-ID: ${CALL_ID}\r\nCSeq: ${cseq}\r\n${body ? "Content-Type: application/sdp\r\n" : ""}Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`
  );
}

function rtp(seq: number, ts: number, ssrc: number): Uint8Array {
  const b = new Uint8Array(12 + 160);
  const dv = new DataView(b.buffer);
  b[0] = 0x80;
  b[1] = 0;
  dv.setUint16(2, seq & 0xffff);
  dv.setUint32(4, ts >>> 0);
  dv.setUint32(8, ssrc);
  b.fill(0xff, 12);
  return b;
}

/** RFC 3550 §6.4.2 receiver report with one block about `source`. */
function rr(ssrc: number, source: number, fraction: number, lost: number, seq: number, jitter: number): Uint8Array {
  const b = new Uint8Array(32);
  const dv = new DataView(b.buffer);
  dv.setUint8(0, 0x81);
  dv.setUint8(1, 201);
  dv.setUint16(2, 7);
  dv.setUint32(4, ssrc);
  dv.setUint32(8, source);
  dv.setUint32(12, (fraction << 24) | lost);
  dv.setUint32(16, seq);
  dv.setUint32(20, jitter);
  return b;
}

/** The call: INVITE, 200 with SDP, ACK, 400 RTP packets A → B (with loss, reordering, jitter), 3 RTCP RRs B → A, BYE, 200. */
function capture(t0Us: number): Uint8Array {
  const recs: PcapRecord[] = [];
  const from = (e: typeof A, to: typeof B, port: "sip" | "rtp" | "rtcp", payload: Uint8Array, at: number) => {
    const p = port === "rtcp" ? [e.rtp + 1, to.rtp + 1] : port === "rtp" ? [e.rtp, to.rtp] : [e.sip, to.sip];
    recs.push({ timestampUs: at, srcIp: e.ip, dstIp: to.ip, srcPort: p[0]!, dstPort: p[1]!, payload });
  };
  from(A, B, "sip", enc.encode(sip("INVITE sip:bob@example.com SIP/2.0", "1 INVITE", sdp(A.ip, A.rtp))), t0Us);
  from(B, A, "sip", enc.encode(sip("SIP/2.0 200 OK", "1 INVITE", sdp(B.ip, B.rtp))), t0Us + 50_000);
  from(A, B, "sip", enc.encode(sip("ACK sip:bob@example.com SIP/2.0", "1 ACK")), t0Us + 60_000);
  const start = t0Us + 100_000;
  const media: Array<{ at: number; seq: number }> = [];
  for (let i = 0; i < PACKETS; i++) if (!LOST.has(i)) media.push({ at: start + i * 20_000 + offsetUs(i), seq: i });
  // Two pairs arrive swapped: the later packet first (its own arrival time stays in order in the file).
  for (const s of SWAPPED) {
    const k = media.findIndex((m) => m.seq === s);
    const [x, y] = [media[k]!, media[k + 1]!];
    media[k] = { at: x.at, seq: y.seq };
    media[k + 1] = { at: y.at, seq: x.seq };
  }
  for (const m of media) from(A, B, "rtp", rtp(1000 + m.seq, 160_000 + m.seq * 160, 0x5eed), m.at);
  for (let k = 1; k <= 3; k++)
    from(B, A, "rtcp", rr(0xb0b, 0x5eed, 3 * k, k, 1000 + k * 130, 40 + k), start + k * 2_600_000 + 1_000);
  // A datagram to a port no SDP names stays udp_not_sip.
  recs.push({
    timestampUs: start + 5_000,
    srcIp: A.ip,
    dstIp: B.ip,
    srcPort: 9,
    dstPort: 9,
    payload: enc.encode("noise"),
  });
  const end = start + PACKETS * 20_000 + 20_000;
  from(A, B, "sip", enc.encode(sip("BYE sip:bob@example.com SIP/2.0", "2 BYE")), end);
  from(B, A, "sip", enc.encode(sip("SIP/2.0 200 OK", "2 BYE")), end + 10_000);
  recs.sort((p, q) => p.timestampUs - q.timestampUs);
  return writePcap(recs);
}

async function importFile(api: Api, bytes: Uint8Array, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append("file", new File([bytes.slice()], "call-with-rtp.pcap"));
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return await api.call("POST", "/imports/pcap", form);
}

/** tshark's `-q -z rtp,streams` line of the A → B stream: lost packets, max and mean jitter (ms). */
async function tsharkStream(file: string): Promise<{ lost: number; maxJitter: number; meanJitter: number }> {
  const r = Bun.spawnSync(["tshark", "-n", "-r", file, "-o", "rtp.heuristic_rtp:TRUE", "-q", "-z", "rtp,streams"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new TextDecoder().decode(r.stdout);
  expect({ exit: r.exitCode, err: r.exitCode ? new TextDecoder().decode(r.stderr) : "" }).toEqual({ exit: 0, err: "" });
  const line = out.split("\n").find((l) => l.includes(A.ip) && l.includes(String(A.rtp)) && /0x0*5eed/i.test(l));
  if (!line) throw new Error(`tshark listed no A → B stream:\n${out}`);
  // … Payload  Pkts  Lost (pct)  Min Delta  Mean Delta  Max Delta  Min Jitter  Mean Jitter  Max Jitter  Problem?
  const m = /\s(\d+)\s+(-?\d+)\s+\(([-\d.]+)%\)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)/.exec(
    line,
  );
  if (!m) throw new Error(`unexpected tshark line: ${line}`);
  return { lost: Number(m[2]), meanJitter: Number(m[8]), maxJitter: Number(m[9]) };
}

peerTest(
  "RTP and RTCP of an imported call: RTCP rows, an RTP media report agreeing with tshark, both in the QoS view",
  [PEERS.tshark],
  async () => {
    await using dir = tempDir("svc-import-rtp-");
    await using s = await startWithApi(dir.path);
    const t0 = Date.now() * 1000 - 60_000_000;
    const bytes = capture(t0);
    const file = join(dir.path, "call.pcap");
    writeFileSync(file, bytes);
    const r = await importFile(s.api, bytes);
    expect(r.status).toBe(201);
    const rep = r.json!.data as Record<string, unknown> & {
      media: Record<string, number>;
      skipped: Record<string, number>;
      tables: Record<string, number>;
    };
    expect(rep.media).toEqual({ rtcp_reports: 3, rtp_packets: PACKETS - LOST.size, rtp_streams: 1 });
    expect(rep.skipped.udp_not_sip).toBe(1);
    expect(rep.tables).toMatchObject({ hep_proto_5_default: 3, hep_proto_34_default: 1 });
    expect(rep.time_shift).toBeNull();

    const q = await s.api.call("POST", "/transactions/qos", {
      session_id: CALL_ID,
      timestamp: { from: t0 / 1000 - 60_000, to: Date.now() + 60_000 },
    });
    expect(q.status).toBe(200);
    const streams = (
      q.json!.data as {
        streams: Array<
          Record<string, unknown> & { points: Array<Record<string, number>>; summary: Record<string, number> }
        >;
      }
    ).streams;
    const rtcp = streams.find((x) => x.proto === 5)!;
    expect({
      src: `${rtcp.src_ip}:${rtcp.src_port}`,
      reports: rtcp.summary.reports,
      lost: rtcp.summary.total_lost,
    }).toEqual({ src: `${B.ip}:${B.rtp + 1}`, reports: 3, lost: 3 });
    expect(rtcp.computed_from_rtp).toBe(false);
    const media = streams.find((x) => x.proto === 34)!;
    expect({
      src: `${media.src_ip}:${media.src_port}`,
      dst: `${media.dst_ip}:${media.dst_port}`,
      ssrc: media.ssrc,
      rtp: media.computed_from_rtp,
    }).toEqual({
      src: `${A.ip}:${A.rtp}`,
      dst: `${B.ip}:${B.rtp}`,
      ssrc: String(0x5eed),
      rtp: true,
    });
    const events = await s.api.call("POST", "/transactions/events", {
      session_id: CALL_ID,
      timestamp: { from: t0 / 1000 - 60_000, to: Date.now() + 60_000 },
    });
    const report = (events.json!.data!.items ?? []).find((it) => it.kind === "media")!;
    const j = JSON.parse(String(report.payload)) as Record<string, number | string>;
    expect(j).toMatchObject({
      source: "rtp",
      CORRELATION_ID: CALL_ID,
      CODEC_NAME: "PCMU",
      CLOCK: 8000,
      packets: PACKETS - LOST.size,
      expected: PACKETS,
      packets_lost: LOST.size,
    });
    // A gap counts once per loss run (3: 50-51, 200, 333), each swapped pair twice (the jump ahead, then the late packet): 7.
    expect(j.seq_errors).toBe(7);
    expect(report.summary).toBe(
      `Media report (computed from RTP) · MOS ${Number(j.mos).toFixed(2)} · ${LOST.size} lost · jitter ${j.jitter} ms`,
    );

    const ts = await tsharkStream(file);
    const near = (ours: number, theirs: number) => Math.abs(ours - theirs) <= Math.abs(theirs) * 0.01;
    expect({ lost: j.packets_lost, tshark: ts.lost }).toEqual({ lost: ts.lost, tshark: ts.lost });
    expect({ max: j.max_jitter, tshark: ts.maxJitter, near: near(Number(j.max_jitter), ts.maxJitter) }).toMatchObject({
      near: true,
    });
    expect({ mean: j.jitter, tshark: ts.meanJitter, near: near(Number(j.jitter), ts.meanJitter) }).toMatchObject({
      near: true,
    });
  },
  120_000,
);

test("override_to_current_time: the shift in words", async () => {
  await using dir = tempDir("svc-import-rtp-shift-");
  await using s = await startWithApi(dir.path);
  const t0 = Date.UTC(2005, 0, 1) * 1000;
  const r = await importFile(s.api, capture(t0), { override_to_current_time: "true" });
  expect(r.status).toBe(201);
  const rep = r.json!.data as { time_shift: string; time_shift_us: number; media: Record<string, number> };
  const years = Math.floor(rep.time_shift_us / 1e6 / (365 * 86_400));
  expect(rep.time_shift).toMatch(new RegExp(`^shifted ${years} y (\\d+ d )?to now$`));
  // The media rows moved with the SIP.
  expect(rep.media.rtcp_reports).toBe(3);
}, 60_000);
