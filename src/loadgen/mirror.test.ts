import { describe, expect, test } from "bun:test";
import { decodeHep } from "../hep/index.ts";
import { createMirror } from "./mirror.ts";
import { streamSsrc, type MediaAddress } from "./rtcp.ts";

type Report = { stream: string; ssrc: number; source: number; kind: "raw" | "json" };

/** Both ends of one call mirror their RTCP reports to a real UDP socket on loopback; the decoded reports by stream. */
async function reportsOfBothEnds(callId: string, a: MediaAddress, b: MediaAddress): Promise<Report[]> {
  const got: Report[] = [];
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const sock = await Bun.udpSocket({
    hostname: "127.0.0.1",
    socket: {
      data(_s, buf) {
        const r = decodeHep(new Uint8Array(buf));
        if (!r.ok) throw new Error(r.reason);
        const p = r.value;
        const stream = `${p.srcIp}:${p.srcPort}>${p.dstIp}:${p.dstPort}`;
        if (p.payload[0] === 0x81) {
          const dv = new DataView(p.payload.buffer, p.payload.byteOffset, p.payload.byteLength);
          got.push({ stream, ssrc: dv.getUint32(4), source: dv.getUint32(28), kind: "raw" });
        } else {
          const j = JSON.parse(new TextDecoder().decode(p.payload)) as {
            ssrc: number;
            report_blocks: Array<{ source_ssrc: number }>;
          };
          got.push({ stream, ssrc: j.ssrc, source: j.report_blocks[0]!.source_ssrc, kind: "json" });
        }
        if (got.length === 8) resolve();
      },
    },
  });
  const options = {
    hep_addr: `127.0.0.1:${sock.port}`,
    hep_capture_id: 1,
    hep_password: "",
    trace_msg: false,
    message_file: "",
    trace_logs: false,
    log_file: "",
    send_media_report: false,
  };
  const ends = [
    await createMirror({ ...options, hep_raw_rtcp: true, hep_homer_lake_rtcp: true }),
    await createMirror({ ...options, hep_raw_rtcp: true, hep_homer_lake_rtcp: true }),
  ];
  try {
    ends[0]!.rtcp(callId, a, b);
    ends[1]!.rtcp(callId, b, a);
    await all;
  } finally {
    for (const m of ends) m.close();
    sock.close();
  }
  return got.sort((x, y) => x.stream.localeCompare(y.stream) || x.kind.localeCompare(y.kind));
}

describe("mirrored RTCP reports", () => {
  test("both ends' reports of one stream carry the sender's SSRC; the two directions differ", async () => {
    const a = { ip: "127.0.0.1", port: 6000 };
    const b = { ip: "127.0.0.2", port: 26000 };
    const reports = await reportsOfBothEnds("call-1@h", a, b);
    const sa = streamSsrc("call-1@h", a);
    const sb = streamSsrc("call-1@h", b);
    expect(sa).not.toBe(sb);
    const ab = { stream: "127.0.0.1:6001>127.0.0.2:26001", ssrc: sa, source: sb };
    const ba = { stream: "127.0.0.2:26001>127.0.0.1:6001", ssrc: sb, source: sa };
    // Per stream: a raw and a JSON report from each end, all with the same SSRCs.
    expect(reports).toEqual(
      [ab, ab, ab, ab, ba, ba, ba, ba].map((r, i) => ({ ...r, kind: i % 4 < 2 ? "json" : "raw" })),
    );
    // Another call between the same addresses has other SSRCs.
    expect(streamSsrc("call-2@h", a)).not.toBe(sa);
  });
});

describe("mirrored SIP copies", () => {
  test("copies carry strictly increasing microsecond times in the order they were made", async () => {
    // Batches made in a tight loop (many copies per millisecond), each delivered before the next
    // batch so that the loopback socket's buffer never drops one.
    const BATCH = 100;
    const BATCHES = 30;
    const stamps: Array<{ seq: number; us: number }> = [];
    let arrived = () => {};
    const sock = await Bun.udpSocket({
      hostname: "127.0.0.1",
      socket: {
        data(_s, buf) {
          const r = decodeHep(new Uint8Array(buf));
          if (!r.ok) throw new Error(r.reason);
          const seq = Number(/^CSeq: (\d+)/m.exec(new TextDecoder().decode(r.value.payload))![1]);
          stamps.push({ seq, us: r.value.timestampUs });
          if (stamps.length % BATCH === 0) arrived();
        },
      },
    });
    const options = {
      hep_addr: `127.0.0.1:${sock.port}`,
      hep_capture_id: 1,
      hep_password: "",
      trace_msg: false,
      message_file: "",
      trace_logs: false,
      log_file: "",
      hep_raw_rtcp: false,
      hep_homer_lake_rtcp: false,
      send_media_report: false,
    };
    // Two mirrors of one process (a client and a server engine): one clock for both.
    const ends = [await createMirror(options), await createMirror(options)];
    try {
      for (let b = 0; b < BATCHES; b++) {
        const delivered = new Promise<void>((r) => (arrived = r));
        for (let seq = b * BATCH + 1; seq <= (b + 1) * BATCH; seq++) {
          ends[seq % 2]!.copy({
            direction: seq % 2 ? "sent" : "received",
            ipProtocol: 17,
            srcIp: "127.0.0.1",
            srcPort: 5060,
            dstIp: "127.0.0.2",
            dstPort: 5060,
            text: `OPTIONS sip:a@b SIP/2.0\r\nCSeq: ${seq} OPTIONS\r\n\r\n`,
          });
        }
        await delivered;
      }
    } finally {
      for (const m of ends) m.close();
      sock.close();
    }
    // UDP on loopback may deliver out of order: the copies' own order is their CSeq.
    const bySeq = stamps.sort((x, y) => x.seq - y.seq).map((s) => s.us);
    const backwards = bySeq.filter((us, k) => k > 0 && us <= bySeq[k - 1]!).length;
    expect({ copies: bySeq.length, backwards, integer: bySeq.every((us) => Number.isInteger(us)) }).toEqual({
      copies: BATCH * BATCHES,
      backwards: 0,
      integer: true,
    });
  });
});
