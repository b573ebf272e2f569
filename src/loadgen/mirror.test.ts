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
          const j = JSON.parse(new TextDecoder().decode(p.payload)) as { ssrc: number; report_blocks: Array<{ source_ssrc: number }> };
          got.push({ stream, ssrc: j.ssrc, source: j.report_blocks[0]!.source_ssrc, kind: "json" });
        }
        if (got.length === 8) resolve();
      },
    },
  });
  const options = { hep_addr: `127.0.0.1:${sock.port}`, hep_capture_id: 1, hep_password: "", trace_msg: false, message_file: "", trace_logs: false, log_file: "", send_media_report: false };
  const ends = [await createMirror({ ...options, hep_raw_rtcp: true, hep_homer_lake_rtcp: true }), await createMirror({ ...options, hep_raw_rtcp: true, hep_homer_lake_rtcp: true })];
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
    expect(reports).toEqual([ab, ab, ab, ab, ba, ba, ba, ba].map((r, i) => ({ ...r, kind: i % 4 < 2 ? "json" : "raw" })));
    // Another call between the same addresses has other SSRCs.
    expect(streamSsrc("call-2@h", a)).not.toBe(sa);
  });
});
