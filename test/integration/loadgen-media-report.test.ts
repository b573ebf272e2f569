/**
 * Media reports (docs/LOADGEN.md "Media and RTCP reports"): loadgen ends with `send_media_report`
 * and `hep_addr` pointing at a running appliance end every call with two HEP 34 reports each;
 * svc's QoS view of a call (found by Call-ID) shows one stream per direction with the G.711 MOS and
 * no loss, and the KPIs count the MOS. Against loadgen's own server and against sipp's.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";
import { streamSsrc, type MediaAddress } from "../../src/loadgen/rtcp.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { freeUdpPort, spawnPeer, waitUdpListening } from "../peers/process.ts";
import { opts, startUas } from "./loadgen-harness.ts";

const CALLS = 4;
const PAUSE_MS = 300;
const PASSWORD = "media-report-password";
/** G.107's MOS of G.711 without loss or delay (R 93.2), the codec loadgen's SDP offers and answers. */
const G711_MOS = 4.41;
/** The client's audio address of its n-th call (1, 2, …): a port of its own per call (docs/LOADGEN.md "Engine"). */
const uacMedia = (n: number) => ({ ip: "127.0.0.1", port: 6000 + 2 * (n - 1) });
const UAC_NODE = 2323;
const UAS_NODE = 2324;

type Appliance = Awaited<ReturnType<typeof startTestAppliance>>;

async function startAppliance(path: string): Promise<{ a: Appliance; hep: Partial<LoadgenOptions> }> {
  const a = await startTestAppliance(path, { coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } } });
  return { a, hep: { hep_addr: `127.0.0.1:${a.app.ingest!.listeners.udp!.port()}`, send_media_report: true } };
}

/** A loadgen client's CALLS calls to `remote`; the Call-IDs it put on the wire. */
async function runUac(remote: string, hep: Partial<LoadgenOptions>): Promise<{ callIds: string[]; hepSent: number }> {
  const uac = new Engine({
    opts: opts({
      scenario_name: "uac",
      remote_addr: remote,
      rate: 20,
      total_calls: CALLS,
      pause_ms: PAUSE_MS,
      hep_capture_id: UAC_NODE,
      ...hep,
    }),
    mode: "load",
  });
  await uac.start();
  const callIds: string[] = [];
  const origSend = uac.legs[0]!.send;
  (uac.legs[0] as { send: typeof origSend }).send = (text, host, port) => {
    const m = /^INVITE [\s\S]*?\r\nCall-ID: (.+)\r\n/m.exec(text);
    if (m && !callIds.includes(m[1]!)) callIds.push(m[1]!);
    origSend(text, host, port);
  };
  await uac.done;
  // -d 300 ms at 20 calls/s: the calls overlap.
  expect({ ok: uac.snapshot().calls_successful, concurrent: uac.snapshot().calls_peak >= 2 }).toEqual({
    ok: CALLS,
    concurrent: true,
  });
  return { callIds, hepSent: uac.snapshot().hep_sent };
}

/** The stored HEP 34 rows once there are `n`, each checked for honest figures. */
async function storedReports(a: Appliance, n: number): Promise<Record<string, unknown>[]> {
  const lake = a.app.lake!;
  const rows = await waitFor(
    "every media report stored",
    async () => {
      await lake.sync();
      if (!lake.table("main.hep_proto_34_default")) return undefined;
      const r = await lake.query(
        "SELECT cid, node_id, src_ip, src_port, dst_ip, dst_port, payload FROM svc_lake.main.hep_proto_34_default",
      );
      return r.rows.length === n ? r.rows : undefined;
    },
    20_000,
  );
  for (const row of rows) {
    const j = JSON.parse(String(row.payload)) as Record<string, unknown>;
    // The client's media time (ACK sent → BYE sent) covers its pause; the server's (ACK received →
    // BYE received) is that give or take the loopback's delivery; 20 ms packets, none lost.
    const minMs = Number(row.node_id) === UAC_NODE ? PAUSE_MS : 1;
    expect({
      codec: j.CODEC_NAME,
      lost: j.PACKET_LOSS,
      synthetic: j.synthetic,
      long: Number(j.media_ms) >= minMs,
    }).toEqual({ codec: "PCMU", lost: 0, synthetic: true, long: true });
    expect([j.EXPECTED_PK, j.TOTAL_PK]).toEqual([
      Math.floor(Number(j.media_ms) / 20),
      Math.floor(Number(j.media_ms) / 20),
    ]);
    expect([j.CORRELATION_ID, j.SRC_IP, j.SRC_PORT, j.DST_IP, j.DST_PORT]).toEqual([
      row.cid,
      row.src_ip,
      Number(row.src_port),
      row.dst_ip,
      Number(row.dst_port),
    ]);
  }
  return rows;
}

type Stream = {
  proto: number;
  synthetic: boolean;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  ssrc: string | null;
  summary: Record<string, number | null>;
};

/**
 * Through the API: each call's QoS streams and the KPIs' MOS. `ends(i)` are the audio addresses of
 * call i (0-based). The view lists the call's own streams only, also when every call is answered on one
 * media address (docs/CALL-VIEW.md "Which reports belong to a call").
 */
async function checkApi(
  a: Appliance,
  callIds: string[],
  ends: (i: number) => [MediaAddress, MediaAddress],
  reportsPerStream: number,
): Promise<void> {
  const api = `${a.app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const headers = {
    authorization: `Bearer ${((await login.json()) as { token: string }).token}`,
    "content-type": "application/json",
  };
  const now = Date.now();
  const want = (from: MediaAddress, to: MediaAddress) => ({
    proto: 34,
    synthetic: true,
    stream: `${from.ip}:${from.port}>${to.ip}:${to.port}`,
    reports: reportsPerStream,
    min_mos: G711_MOS,
    avg_mos: G711_MOS,
    total_lost: 0,
    max_fraction_lost: 0,
    max_jitter_ms: 0,
  });
  for (const [i, callId] of callIds.entries()) {
    const [x, y] = ends(i);
    const q = await fetch(`${api}/transactions/qos`, {
      method: "POST",
      headers,
      body: JSON.stringify({ session_id: callId, timestamp: { from: now - 600_000, to: now + 60_000 } }),
    });
    expect(q.status).toBe(200);
    const streams = ((await q.json()) as { data: { streams: Stream[] } }).data.streams;
    // sipp answers every call on its one -mp port: the reports' correlation id, not that address, says whose they are.
    const own = new Set([x, y].map((e) => String(streamSsrc(callId, e))));
    expect({ callId, ssrcs: streams.every((s) => s.ssrc !== null && own.has(s.ssrc)) }).toEqual({
      callId,
      ssrcs: true,
    });
    const mine = streams
      .map((s) => ({
        proto: s.proto,
        synthetic: s.synthetic,
        stream: `${s.src_ip}:${s.src_port}>${s.dst_ip}:${s.dst_port}`,
        ...s.summary,
      }))
      .sort((p, r) => p.stream.localeCompare(r.stream));
    expect({ callId, streams: mine }).toMatchObject({
      callId,
      streams: [want(x, y), want(y, x)].sort((p, r) => p.stream.localeCompare(r.stream)),
    });
  }
  const k = await fetch(`${api}/statistics/kpi?from=${now - 600_000}&to=${now + 60_000}`, { headers });
  expect(k.status).toBe(200);
  const totals = ((await k.json()) as { data: { totals: { mos_avg: number | null; mos_min: number | null } } }).data
    .totals;
  expect(totals.mos_avg).toBeCloseTo(G711_MOS, 9);
  expect(totals.mos_min).toBeCloseTo(G711_MOS, 9);
}

describe("loadgen media reports", () => {
  test("loadgen UAC → loadgen UAS: both ends' reports reach the call's QoS view and the MOS KPIs", async () => {
    await using dir = tempDir("svc-loadgen-media-");
    const { a, hep } = await startAppliance(dir.path);
    await using _a = a;
    // The server listens on 127.0.0.2 so the two ends' media addresses differ, as on a real network.
    const uasMedia = (n: number) => ({ ip: "127.0.0.2", port: 30000 + 2 * (n - 1) });
    const uas = await startUas({ ...hep, local_ip: "127.0.0.2", hep_capture_id: UAS_NODE });
    let run = { callIds: [] as string[], hepSent: 0 };
    let uasSent = 0;
    try {
      run = await runUac(`${"127.0.0.2"}:${uas.binds[0]!.port}`, hep);
      await waitFor("the server ended every call", () => uas.snapshot().calls_successful === CALLS);
      uasSent = uas.snapshot().hep_sent;
    } finally {
      await uas.stop();
    }
    // Per call each end mirrors its six SIP messages and sends two media reports.
    expect({ uac: run.hepSent, uas: uasSent }).toEqual({ uac: CALLS * 8, uas: CALLS * 8 });
    expect(run.callIds).toHaveLength(CALLS);
    const rows = await storedReports(a, CALLS * 4);
    expect(run.callIds.flatMap((c) => rows.filter((r) => r.cid === c).map((r) => Number(r.node_id))).sort()).toEqual(
      run.callIds.flatMap(() => [UAC_NODE, UAC_NODE, UAS_NODE, UAS_NODE]).sort(),
    );
    // One stream per direction, reported by both ends; each call's media on ports of its own, so its QoS view lists only its two streams.
    await checkApi(a, run.callIds, (i) => [uacMedia(i + 1), uasMedia(i + 1)], 2);
  }, 60_000);

  peerTest(
    "loadgen UAC → sipp UAS: the codec and media address come from sipp's answer",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-media-");
      const { a, hep } = await startAppliance(dir.path);
      await using _a = a;
      const port = await freeUdpPort();
      const sippMediaPort = await freeUdpPort();
      await using sipp = spawnPeer(
        "sipp",
        [
          "sipp",
          "-sn",
          "uas",
          "-i",
          "127.0.0.1",
          "-p",
          String(port),
          "-mp",
          String(sippMediaPort),
          "-m",
          String(CALLS),
          "-nostdin",
        ],
        { dir: dir.path },
      );
      await waitUdpListening(sipp, port);
      const run = await runUac(`127.0.0.1:${port}`, hep);
      expect(await sipp.exited(20_000)).toBe(0);
      expect(run.hepSent).toBe(CALLS * 8);
      await storedReports(a, CALLS * 2);
      await checkApi(a, run.callIds, (i) => [uacMedia(i + 1), { ip: "127.0.0.1", port: sippMediaPort }], 1);
    },
    60_000,
  );
});
