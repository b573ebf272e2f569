/**
 * Which media reports belong to a call (docs/CALL-VIEW.md "Which reports belong to a call",
 * docs/KPIS.md "RTCP and MOS"), over HEP ingested on real UDP. Five calls are answered on ONE
 * media address, as sipp's uas answers every call on its -mp port; RTCP (HEP 5 JSON) and agent
 * reports (HEP 34) name some calls by correlation id. A report with a correlation id belongs to
 * that call only; one without belongs to the call whose negotiated address pair it flows on, inside
 * the call's media span. The QoS view, the ladder's events and the KPIs all follow the rule.
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response, withSdp } from "../fixtures/sip.ts";

const PASSWORD = "call-media-rule-password";
const T0_MS = Date.now() - 600_000;
const SIP_NODE = 3101;
/** An RTP agent beside the media: another capture point than the SIP messages'. */
const MEDIA_NODE = 3102;
/** The answerer's one media address (its RTCP on port + 1), shared by every call. */
const UAS = { ip: "10.40.0.100", port: 20000 };
/** The caller's media address of call i: a port of its own per call. */
const uac = (i: number) => ({ ip: "10.40.0.1", port: 6000 + 2 * i });
const CALLS = 5;
const START = (i: number) => i * 1_000;
const ANSWER = (i: number) => START(i) + 500;
const BYE = (i: number) => START(i) + 20_000;

function hep(
  payload: string,
  atMs: number,
  o: {
    proto?: number;
    src?: { ip: string; port: number };
    dst?: { ip: string; port: number };
    cid?: string;
    node?: number;
  },
) {
  return encodeHep3({
    srcIp: o.src?.ip ?? "10.40.0.1",
    dstIp: o.dst?.ip ?? UAS.ip,
    srcPort: o.src?.port ?? 5060,
    dstPort: o.dst?.port ?? 5060,
    timestampUs: (T0_MS + atMs) * 1000,
    protoType: o.proto ?? 1,
    captureId: o.node ?? SIP_NODE,
    nodeName: "edge-rule",
    ...(o.cid ? { correlationId: o.cid } : {}),
    payload,
  });
}

const rtcp = (jitter: number, fl: number) =>
  JSON.stringify({
    type: 201,
    ssrc: 11,
    report_blocks: [{ source_ssrc: 22, fraction_lost: fl, packets_lost: fl, ia_jitter: jitter }],
  });
const rtcpEnd = (e: { ip: string; port: number }) => ({ ip: e.ip, port: e.port + 1 });

test("media reports: a correlation id names its call only; without one, the call's address pair inside its media span; QoS, events and KPIs agree", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = a.app;
  const api = `${coordinatorUrl}/api/v4`;
  const ids = Array.from({ length: CALLS }, (_x, i) => `rule-${i}-${crypto.randomUUID()}`);
  const sip = ids.flatMap((callId, i) => {
    const p = { callId, from: "1001", to: "2002" };
    return [
      hep(invite({ ...p, srcIp: uac(i).ip, mediaPort: uac(i).port }), START(i), {}),
      hep(withSdp(response(200, "OK", "INVITE", { ...p, toTag: "t" }), UAS.ip, UAS.port), ANSWER(i), {
        src: { ip: UAS.ip, port: 5060 },
        dst: { ip: "10.40.0.1", port: 5060 },
      }),
      hep(request("ACK", { ...p, toTag: "t", cseq: 1 }), ANSWER(i) + 10, {}),
      hep(request("BYE", { ...p, toTag: "t", cseq: 2 }), BYE(i), {}),
      hep(response(200, "OK", "BYE", { ...p, toTag: "t", cseq: 2 }), BYE(i) + 10, {
        src: { ip: UAS.ip, port: 5060 },
        dst: { ip: "10.40.0.1", port: 5060 },
      }),
    ];
  });
  // Calls 0 and 1: RTCP both ways with their Call-ID as correlation id. Call 2: none at all.
  // Call 3: an RTP agent's report and RTCP without correlation id on its own address pair inside
  // its media span, and one RTCP on the same pair 60 s after its BYE (outside). Call 4: an agent
  // report with its Call-ID; an RTCP report without correlation id on call 0's pair 3 s after call
  // 0's BYE (outside call 0's span; inside call 4's, but not its pair): nobody's.
  const reports = [
    hep(rtcp(10, 0), ANSWER(0) + 5_000, {
      proto: 5,
      src: rtcpEnd(uac(0)),
      dst: rtcpEnd(UAS),
      cid: ids[0],
      node: MEDIA_NODE,
    }),
    hep(rtcp(20, 0), ANSWER(0) + 5_100, {
      proto: 5,
      src: rtcpEnd(UAS),
      dst: rtcpEnd(uac(0)),
      cid: ids[0],
      node: MEDIA_NODE,
    }),
    hep(rtcp(30, 0), ANSWER(1) + 5_000, {
      proto: 5,
      src: rtcpEnd(uac(1)),
      dst: rtcpEnd(UAS),
      cid: ids[1],
      node: MEDIA_NODE,
    }),
    hep(rtcp(40, 0), ANSWER(1) + 5_100, {
      proto: 5,
      src: rtcpEnd(UAS),
      dst: rtcpEnd(uac(1)),
      cid: ids[1],
      node: MEDIA_NODE,
    }),
    hep(rtcp(50, 64), ANSWER(3) + 5_000, { proto: 5, src: rtcpEnd(UAS), dst: rtcpEnd(uac(3)), node: MEDIA_NODE }),
    hep(JSON.stringify({ mos: 380, jitter: 3, packets_lost: 2 }), BYE(3) + 500, {
      proto: 34,
      src: uac(3),
      dst: UAS,
      node: MEDIA_NODE,
    }),
    hep(rtcp(999, 255), BYE(3) + 60_000, { proto: 5, src: rtcpEnd(UAS), dst: rtcpEnd(uac(3)), node: MEDIA_NODE }),
    hep(rtcp(888, 128), BYE(0) + 3_000, { proto: 5, src: rtcpEnd(UAS), dst: rtcpEnd(uac(0)), node: MEDIA_NODE }),
    hep(JSON.stringify({ mos: 420, jitter: 1, packets_lost: 0 }), BYE(4) + 100, {
      proto: 34,
      src: uac(4),
      dst: UAS,
      cid: ids[4],
      node: MEDIA_NODE,
    }),
    // A correlation id that names no call of the lake: no call's, not counted in the KPIs either.
    hep(rtcp(777, 200), ANSWER(2) + 5_000, {
      proto: 5,
      src: rtcpEnd(uac(2)),
      dst: rtcpEnd(UAS),
      cid: "no-such-call",
      node: MEDIA_NODE,
    }),
  ];
  const packets = [...sip, ...reports];
  const udp = await Bun.udpSocket({});
  for (const pk of packets) udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  await waitFor("the rows in the lake", async () => {
    await lake!.sync();
    const n = async (t: string) =>
      lake!.table(`main.${t}`)
        ? Number((await lake!.query(`SELECT count(*) AS n FROM svc_lake.main.${t}`)).rows[0]!.n)
        : 0;
    return (
      (await n("hep_proto_1_call")) + (await n("hep_proto_5_default")) + (await n("hep_proto_34_default")) ===
      packets.length
    );
  });

  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const headers = {
    authorization: `Bearer ${((await login.json()) as { token: string }).token}`,
    "content-type": "application/json",
  };
  const timestamp = { from: T0_MS - 60_000, to: Date.now() };
  const post = async (path: string, callId: string) => {
    const r = await fetch(`${api}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify({ session_id: callId, timestamp }),
    });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Record<string, any> }).data;
  };
  type Stream = {
    proto: number;
    src_ip: string;
    src_port: number;
    dst_ip: string;
    dst_port: number;
    summary: { reports: number; max_jitter: number | null; min_mos: number | null };
  };
  const streams = async (i: number) =>
    ((await post("/transactions/qos", ids[i]!)).streams as Stream[])
      .map(
        (s) =>
          `${s.proto} ${s.src_ip}:${s.src_port}>${s.dst_ip}:${s.dst_port} ${s.proto === 5 ? s.summary.max_jitter : s.summary.min_mos}`,
      )
      .sort();
  const events = async (i: number) =>
    ((await post("/transactions/events", ids[i]!)).items as Array<{ kind: string; summary: string }>).map(
      (e) => `${e.kind} ${e.summary}`,
    );

  const end = (e: { ip: string; port: number }) => `${e.ip}:${e.port}`;
  expect(await streams(0)).toEqual(
    [`5 ${end(rtcpEnd(uac(0)))}>${end(rtcpEnd(UAS))} 10`, `5 ${end(rtcpEnd(UAS))}>${end(rtcpEnd(uac(0)))} 20`].sort(),
  );
  expect(await streams(1)).toEqual(
    [`5 ${end(rtcpEnd(uac(1)))}>${end(rtcpEnd(UAS))} 30`, `5 ${end(rtcpEnd(UAS))}>${end(rtcpEnd(uac(1)))} 40`].sort(),
  );
  // No RTCP of its own: nothing, although other calls' reports flow to the same answer address in its time.
  expect(await streams(2)).toEqual([]);
  expect(await streams(3)).toEqual(
    [`34 ${end(uac(3))}>${end(UAS)} 3.8`, `5 ${end(rtcpEnd(UAS))}>${end(rtcpEnd(uac(3)))} 50`].sort(),
  );
  expect(await streams(4)).toEqual([`34 ${end(uac(4))}>${end(UAS)} 4.2`]);

  // The ladder's markers: the same reports.
  expect(await events(0)).toEqual([
    "rtcp RTCP RR · jitter 10 · loss 0.0 % · 0 lost · MOS 4.41",
    "rtcp RTCP RR · jitter 20 · loss 0.0 % · 0 lost · MOS 4.41",
  ]);
  expect(await events(2)).toEqual([]);
  expect(await events(3)).toEqual([
    "rtcp RTCP RR · jitter 50 · loss 25.0 % · 64 lost · MOS 2.34",
    "media Media report · MOS 3.80 · 2 lost · jitter 3 ms",
  ]);
  expect(await events(4)).toEqual(["media Media report · MOS 4.20 · 0 lost · jitter 1 ms"]);

  // The KPIs count the reports that belong to a call of the window: 5 RTCP, 2 MOS; the report of
  // no call and the two outside any call's media span are left out. The node is the calls' (the
  // SIP capture point), so the RTP agent's reports still count.
  for (const node of ["", `&node=${SIP_NODE}`]) {
    const k = await fetch(`${api}/statistics/kpi?from=${T0_MS - 60_000}&to=${Date.now()}${node}`, { headers });
    expect(k.status).toBe(200);
    const tot = ((await k.json()) as { data: { totals: Record<string, number | null> } }).data.totals;
    const jit = [10, 20, 30, 40, 50];
    expect({
      node,
      reports: tot.rtcp_reports,
      jitter: tot.jitter_ms_avg,
      jitterMax: tot.jitter_ms_max,
      loss: tot.loss_pct_max,
      mos: tot.mos_avg,
      mosMin: tot.mos_min,
    }).toEqual({
      node,
      reports: 5,
      jitter: jit.reduce((x, y) => x + y, 0) / jit.length / 8,
      jitterMax: 50 / 8,
      loss: 25,
      mos: 4,
      mosMin: 3.8,
    });
  }
  const other = await fetch(`${api}/statistics/kpi?from=${T0_MS - 60_000}&to=${Date.now()}&node=${MEDIA_NODE}`, {
    headers,
  });
  expect(((await other.json()) as { data: { totals: Record<string, number | null> } }).data.totals).toMatchObject({
    attempts: 0,
    rtcp_reports: 0,
    mos_avg: null,
  });
}, 60_000);
