/**
 * Binary RTCP (docs/CALL-VIEW.md "Binary RTCP"): loadgen with `hep_raw_rtcp` and
 * `hep_homer_lake_rtcp` (docs/LOADGEN.md "Media and RTCP reports") sends every report twice, as
 * the RTCP packet and as the agents' JSON. Through a running appliance both forms give the same QoS
 * figures (POST /transactions/qos), count alike in the KPIs, and the call's timeline summarises
 * the binary one instead of "binary, not decoded". A pair with loss, jitter and an LSR (hand-made,
 * one form per capture node) checks the figures that are not zero.
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3, ntpMiddle32 } from "../../src/hep/index.ts";
import { Engine } from "../../src/loadgen/index.ts";
import { lakeReport, rawSenderReport } from "../../src/loadgen/rtcp.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { opts, startUas } from "./loadgen-harness.ts";

const CALLS = 2;
const PASSWORD = "rtcp-binary-password";
const UAC_NODE = 2425;
const JSON_NODE = 7001;
const BINARY_NODE = 7002;

type Point = Record<string, number> & { ts_ms: number };
type Stream = {
  proto: number;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  ssrc: string | null;
  points: Point[];
};

test("the same RTCP report as JSON and as the binary packet: same QoS, same KPIs, decoded in the timeline", async () => {
  await using dir = tempDir("svc-rtcp-binary-");
  const a = await startTestAppliance(dir.path, { coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } } });
  await using _a = a;
  const hepPort = a.app.ingest!.listeners.udp!.port();
  const hep = {
    hep_addr: `127.0.0.1:${hepPort}`,
    hep_raw_rtcp: true,
    hep_homer_lake_rtcp: true,
    hep_capture_id: UAC_NODE,
  };
  const uas = await startUas({ local_ip: "127.0.0.2" });
  const callIds: string[] = [];
  try {
    const uac = new Engine({
      opts: opts({
        scenario_name: "uac",
        remote_addr: `127.0.0.2:${uas.binds[0]!.port}`,
        rate: 20,
        total_calls: CALLS,
        pause_ms: 50,
        ...hep,
      }),
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
  } finally {
    await uas.stop();
  }
  const lake = a.app.lake!;
  // The first call's audio addresses, from its stored INVITE and 200 (RTCP on RTP port + 1).
  const sdp = await waitFor("the first call's SIP", async () => {
    await lake.sync();
    if (!lake.table("main.hep_proto_1_call")) return undefined;
    const r = await lake.query(
      `SELECT payload FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1 AND payload LIKE '%m=audio%'`,
      [callIds[0]!],
    );
    return r.rows.length >= 2 ? r.rows.map((x) => String(x.payload)) : undefined;
  });
  const ends = sdp.map((p) => ({ ip: /^c=IN IP4 (\S+)/m.exec(p)![1]!, port: Number(/^m=audio (\d+)/m.exec(p)![1]) }));
  const [x, y] = [ends[0]!, ends.find((e) => e.ip !== ends[0]!.ip || e.port !== ends[0]!.port)!];
  // The figures that are not zero: 26/256 lost, 7 in all, jitter 160 units (20 ms at 8 kHz), SR 300 ms before, held 100 ms.
  const now = Date.now();
  const b = rawSenderReport(0xabc, 0xdef, now);
  const dv = new DataView(b.buffer);
  dv.setUint32(32, (26 << 24) | 7);
  dv.setUint32(40, 160);
  dv.setUint32(44, ntpMiddle32(now - 300));
  dv.setUint32(48, 6554);
  const j = JSON.parse(lakeReport(0xabc, 0xdef, now)) as { report_blocks: Array<Record<string, number>> };
  Object.assign(j.report_blocks[0]!, {
    fraction_lost: 26,
    packets_lost: 7,
    ia_jitter: 160,
    lsr: ntpMiddle32(now - 300),
    dlsr: 6554,
  });
  const udp = await Bun.udpSocket({});
  for (const [node, payload] of [
    [JSON_NODE, JSON.stringify(j)],
    [BINARY_NODE, b],
  ] as const) {
    const base = {
      srcIp: x.ip,
      dstIp: y.ip,
      srcPort: x.port + 1,
      dstPort: y.port + 1,
      ipProtocol: 17,
      protoType: 5,
      timestampUs: now * 1000,
      correlationId: callIds[0]!,
    };
    udp.send(encodeHep3({ ...base, captureId: node, payload }), hepPort, "127.0.0.1");
  }
  udp.close();
  // Per call two reports per direction (one of each form), plus the pair.
  const want = CALLS * 4 + 2;
  await waitFor("every RTCP report stored", async () => {
    await lake.sync();
    if (!lake.table("main.hep_proto_5_default")) return undefined;
    const r = await lake.query(
      "SELECT count(*) AS n, count(*) FILTER (WHERE json_extract_string(data_extra, '$.payload_encoding') = 'base64') AS bin FROM svc_lake.main.hep_proto_5_default",
    );
    return Number(r.rows[0]!.n) === want && Number(r.rows[0]!.bin) === want / 2 ? true : undefined;
  });

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
  const range = { from: now - 600_000, to: now + 60_000 };
  for (const [i, callId] of callIds.entries()) {
    const q = await fetch(`${api}/transactions/qos`, {
      method: "POST",
      headers,
      body: JSON.stringify({ session_id: callId, timestamp: range }),
    });
    expect(q.status).toBe(200);
    const streams = ((await q.json()) as { data: { streams: Stream[] } }).data.streams.filter((s) => s.proto === 5);
    // loadgen's reports: per direction one stream (same addresses and SSRC for both forms), two points alike.
    const own = streams.filter((s) => s.ssrc !== String(0xabc));
    expect(own).toHaveLength(2);
    for (const s of own) {
      expect(s.points).toHaveLength(2);
      const [p1, p2] = s.points;
      // The two forms are two packets: their capture times may differ by a tick under load.
      const { ts_ms: t1, ...q1 } = p1!;
      const { ts_ms: t2, ...q2 } = p2!;
      expect({ callId, p: q1 }).toEqual({ callId, p: q2 });
      expect(Math.abs(Number(t1) - Number(t2))).toBeLessThan(1000);
      expect(p1).toMatchObject({ jitter: 0, jitter_ms: 0, fraction_lost: 0, packets_lost: 0, mos: 4.41 });
    }
    if (i > 0) continue;
    const pair = streams.find((s) => s.ssrc === String(0xabc));
    expect(pair?.points).toHaveLength(2);
    const [p1, p2] = pair!.points;
    expect(p1).toEqual(p2!);
    expect(p1).toMatchObject({
      jitter: 160,
      jitter_ms: 20,
      fraction_lost: 26,
      packets_lost: 7,
      mos: 3.23,
      r_factor: 62.5,
    });
    expect(p1!.delay).toBeCloseTo(200, 0);

    // The timeline: every RTCP report summarised, the binary and the JSON one alike.
    const e = await fetch(`${api}/transactions/events`, {
      method: "POST",
      headers,
      body: JSON.stringify({ session_id: callId, timestamp: range }),
    });
    expect(e.status).toBe(200);
    const items = ((await e.json()) as { data: { items: Array<Record<string, unknown>> } }).data.items.filter(
      (it) => it.kind === "rtcp",
    );
    expect(items).toHaveLength(6);
    expect(items.filter((it) => String(it.summary).includes("not decoded"))).toEqual([]);
    const byNode = (n: number) => items.find((it) => it.node_id === n)!;
    expect([byNode(JSON_NODE).summary, byNode(BINARY_NODE).summary]).toEqual([
      "RTCP SR · jitter 160 · loss 10.2 % · 7 lost · MOS 3.23",
      "RTCP SR · jitter 160 · loss 10.2 % · 7 lost · MOS 3.23",
    ]);
    expect(byNode(BINARY_NODE).qos).toEqual(byNode(JSON_NODE).qos);
  }

  // KPIs count a call's reports (docs/KPIS.md "RTCP and MOS"; `node` selects the calls, all from
  // loadgen's node here): both forms of every report, the pair's two with its jitter and loss. A
  // binary report the KPIs could not read would leave rtcp_reports at half.
  const k = await fetch(`${api}/statistics/kpi?from=${range.from}&to=${range.to}&node=${UAC_NODE}`, { headers });
  expect(k.status).toBe(200);
  const t = ((await k.json()) as { data: { totals: Record<string, number | null> } }).data.totals;
  const n = CALLS * 4 + 2;
  expect({ rtcp_reports: t.rtcp_reports, jitter_ms_max: t.jitter_ms_max, loss_pct_max: t.loss_pct_max }).toEqual({
    rtcp_reports: n,
    jitter_ms_max: 20,
    loss_pct_max: 26 / 2.56,
  });
  expect(t.jitter_ms_avg).toBeCloseTo((2 * 20) / n, 6);
  expect(t.loss_pct_avg).toBeCloseTo((2 * 26) / 2.56 / n, 6);
}, 60_000);
