/**
 * Media reports (docs/LOADGEN.md "Media and RTCP reports"): a loadgen client and a loadgen server,
 * both with `send_media_report` and `hep_addr` pointing at a running appliance, end every call with
 * two HEP 34 reports each; svc's QoS view of a call (found by Call-ID) shows one stream per
 * direction with the G.711 MOS and no loss, and the KPIs count the MOS.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { Engine } from "../../src/loadgen/index.ts";
import { streamSsrc } from "../../src/loadgen/media-report.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { opts, startUas } from "./loadgen-harness.ts";

const CALLS = 4;
const PAUSE_MS = 300;
const PASSWORD = "media-report-password";
/** G.107's MOS of G.711 without loss or delay (R 93.2), the codec loadgen's SDP offers and answers. */
const G711_MOS = 4.41;
const UAC = { ip: "127.0.0.1", port: 6000 };
const UAS = { ip: "127.0.0.2", port: 6000 };

describe("loadgen media reports", () => {
  test("both ends' HEP 34 reports reach svc's QoS view of the call and its MOS KPIs", async () => {
    await using dir = tempDir("svc-loadgen-media-");
    await using a = await startTestAppliance(dir.path, { coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } } });
    const hep = { hep_addr: `127.0.0.1:${a.app.ingest!.listeners.udp!.port()}`, send_media_report: true };
    // The server listens on 127.0.0.2 so the two ends' media addresses differ, as on a real network.
    const uas = await startUas({ ...hep, local_ip: UAS.ip, hep_capture_id: 2324 });
    const callIds: string[] = [];
    let sent = { uac: 0, uas: 0 };
    try {
      const uac = new Engine({
        opts: opts({ scenario_name: "uac", remote_addr: `${UAS.ip}:${uas.binds[0]!.port}`, rate: 20, total_calls: CALLS, pause_ms: PAUSE_MS, hep_capture_id: 2323, ...hep }),
        mode: "load",
      });
      await uac.start();
      const origSend = uac.legs[0]!.send;
      (uac.legs[0] as { send: typeof origSend }).send = (text, host, port) => {
        const m = /^INVITE [\s\S]*?\r\nCall-ID: (.+)\r\n/m.exec(text);
        if (m && !callIds.includes(m[1]!)) callIds.push(m[1]!);
        origSend(text, host, port);
      };
      await uac.done;
      expect(uac.snapshot().calls_successful).toBe(CALLS);
      await waitFor("the server ended every call", () => uas.snapshot().calls_successful === CALLS);
      sent = { uac: uac.snapshot().hep_sent, uas: uas.snapshot().hep_sent };
    } finally {
      await uas.stop();
    }
    // Per call each end mirrors its six SIP messages and sends two media reports.
    expect(sent).toEqual({ uac: CALLS * 8, uas: CALLS * 8 });
    expect(callIds).toHaveLength(CALLS);

    const lake = a.app.lake!;
    const reports = await waitFor(
      "every media report stored",
      async () => {
        await lake.sync();
        if (!lake.table("main.hep_proto_34_default")) return undefined;
        const r = await lake.query("SELECT cid, node_id, src_ip, src_port, dst_ip, dst_port, payload FROM svc_lake.main.hep_proto_34_default");
        return r.rows.length === CALLS * 4 ? r.rows : undefined;
      },
      20_000,
    );
    for (const row of reports) {
      const j = JSON.parse(String(row.payload)) as Record<string, unknown>;
      // Honest figures: the client's media time (ACK sent → BYE sent) covers its pause; the server's
      // (ACK received → BYE received) is that give or take the loopback's delivery; 20 ms packets, none lost.
      const minMs = Number(row.node_id) === 2323 ? PAUSE_MS : 1;
      expect({ codec: j.CODEC_NAME, lost: j.PACKET_LOSS, synthetic: j.synthetic, long: Number(j.media_ms) >= minMs }).toEqual({ codec: "PCMU", lost: 0, synthetic: true, long: true });
      expect([j.EXPECTED_PK, j.TOTAL_PK]).toEqual([Math.floor(Number(j.media_ms) / 20), Math.floor(Number(j.media_ms) / 20)]);
      expect([j.CORRELATION_ID, j.SRC_IP, j.SRC_PORT, j.DST_IP, j.DST_PORT]).toEqual([row.cid, row.src_ip, Number(row.src_port), row.dst_ip, Number(row.dst_port)]);
    }
    expect(callIds.flatMap((c) => reports.filter((r) => r.cid === c).map((r) => Number(r.node_id))).sort()).toEqual(callIds.flatMap(() => [2323, 2323, 2324, 2324]).sort());

    const api = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password: PASSWORD }) });
    const headers = { authorization: `Bearer ${((await login.json()) as { token: string }).token}`, "content-type": "application/json" };
    const now = Date.now();
    type Stream = { proto: number; src_ip: string; src_port: number; dst_ip: string; dst_port: number; ssrc: string | null; summary: Record<string, number | null> };
    for (const callId of callIds) {
      const q = await fetch(`${api}/transactions/qos`, { method: "POST", headers, body: JSON.stringify({ session_id: callId, timestamp: { from: now - 600_000, to: now + 60_000 } }) });
      expect(q.status).toBe(200);
      const streams = ((await q.json()) as { data: { streams: Stream[] } }).data.streams;
      // Every call's media runs between the same two addresses: the call's own streams are those with its SSRCs.
      const own = new Set([String(streamSsrc(callId, UAC)), String(streamSsrc(callId, UAS))]);
      const mine = streams
        .filter((s) => s.ssrc !== null && own.has(s.ssrc))
        .map((s) => ({ proto: s.proto, stream: `${s.src_ip}:${s.src_port}>${s.dst_ip}:${s.dst_port}`, ...s.summary }))
        .sort((x, y) => x.stream.localeCompare(y.stream));
      // One stream per direction, reported by both ends.
      const want = (stream: string) => ({ proto: 34, stream, reports: 2, min_mos: G711_MOS, avg_mos: G711_MOS, total_lost: 0, max_jitter_ms: 0 });
      expect({ callId, streams: mine }).toMatchObject({ callId, streams: [want("127.0.0.1:6000>127.0.0.2:6000"), want("127.0.0.2:6000>127.0.0.1:6000")] });
    }

    const k = await fetch(`${api}/statistics/kpi?from=${now - 600_000}&to=${now + 60_000}`, { headers });
    expect(k.status).toBe(200);
    const totals = ((await k.json()) as { data: { totals: { mos_avg: number | null; mos_min: number | null } } }).data.totals;
    expect(totals.mos_avg).toBeCloseTo(G711_MOS, 9);
    expect(totals.mos_min).toBeCloseTo(G711_MOS, 9);
  }, 60_000);
});
