/**
 * `POST /transactions/events` (docs/CALL-VIEW.md "RTCP and log events") with agent media reports
 * (HEP 34 "MOS full report", 35) ingested on real UDP: loadgen's synthetic reports found by
 * correlation id (docs/LOADGEN.md "Media and RTCP reports"), an RTP agent's report without one found
 * by the offer's and answer's SDP media addresses, a type 35 report; another call's report and a type 35 row
 * that is no media report are left out.
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { mediaReportPackets } from "../../src/loadgen/media-report.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response, withSdp } from "../fixtures/sip.ts";

const PASSWORD = "call-events-media-password";
const T0_MS = Date.now() - 120_000;
const ANSWER_SDP =
  "v=0\r\no=- 1 1 IN IP4 10.30.5.2\r\ns=-\r\nc=IN IP4 10.30.5.2\r\nt=0 0\r\nm=audio 6002 RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n";

function hep(
  payload: string,
  atMs: number,
  o: { proto?: number; src?: string; dst?: string; sport?: number; dport?: number; cid?: string } = {},
) {
  return encodeHep3({
    srcIp: o.src ?? "10.30.0.1",
    dstIp: o.dst ?? "10.30.0.2",
    srcPort: o.sport ?? 5060,
    dstPort: o.dport ?? 5060,
    timestampUs: (T0_MS + atMs) * 1000,
    protoType: o.proto ?? 1,
    captureId: 3002,
    nodeName: "edge-media",
    ...(o.cid ? { correlationId: o.cid } : {}),
    payload,
  });
}

test("call events: media reports (HEP 34/35) by correlation id and by SDP media address, with MOS summaries; synthetic ones say so", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = a.app;
  const api = `${coordinatorUrl}/api/v4`;
  const A = `evm-${crypto.randomUUID()}`;
  const OTHER = `evm-other-${crypto.randomUUID()}`;
  const p = { callId: A, from: "1001", to: "2002" };
  // What loadgen sends at the end of a call: one report per direction, the Call-ID as correlation
  // id, addresses that are not in this call's SDP (so only the correlation id can find them).
  const media = {
    local: { ip: "10.30.5.1", port: 6000 },
    remote: { ip: "10.30.5.2", port: 6002 },
    answerSdp: ANSWER_SDP,
    mediaMs: 10_000,
  };
  const synthetic = mediaReportPackets(A, media, { captureId: 3002, authKey: "" }, T0_MS + 10_100);
  const agent = JSON.stringify({
    TYPE: "FINAL",
    CODEC_NAME: "PCMA",
    MOS: 3.87,
    PACKET_LOSS: 12,
    packets_lost: 12,
    JITTER: 4.5,
  });
  const packets = [
    hep(invite({ ...p, srcIp: "10.30.0.1", mediaPort: 40000 }), 0),
    hep(withSdp(response(200, "OK", "INVITE", { ...p, toTag: "t" }), "10.30.0.2", 42000), 50, {
      src: "10.30.0.2",
      dst: "10.30.0.1",
    }),
    // No correlation id: found by the offer's and the answer's SDP addresses (10.30.0.1:40000, 10.30.0.2:42000).
    hep(agent, 6_000, { proto: 34, src: "10.30.0.2", sport: 42000, dst: "10.30.0.1", dport: 40000 }),
    hep(JSON.stringify({ mos: 402, jitter: 2, packets_lost: 1 }), 7_000, {
      proto: 35,
      src: "10.30.0.1",
      sport: 40000,
      dst: "10.30.0.2",
      dport: 42000,
      cid: A,
    }),
    // A type 35 row that is no media report (docs/KPIS.md reads 35 as DNS): left out.
    hep(JSON.stringify({ query: "sip.example.net", qtype: "NAPTR", answers: 2 }), 7_500, {
      proto: 35,
      src: "10.30.0.1",
      sport: 53001,
      dst: "10.30.0.53",
      dport: 53,
      cid: A,
    }),
    hep(JSON.stringify({ MOS: 2.1, packets_lost: 90, JITTER: 40 }), 8_000, {
      proto: 34,
      src: "10.30.9.9",
      sport: 50000,
      dst: "10.30.9.8",
      dport: 50002,
      cid: OTHER,
    }),
    hep(request("BYE", { ...p, toTag: "t", cseq: 2 }), 10_000),
    ...synthetic,
  ];
  const udp = await Bun.udpSocket({});
  for (const pk of packets) udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  await waitFor("the rows in the lake", async () => {
    await lake!.sync();
    const r = await lake!.query(
      `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call) + (SELECT count(*) FROM svc_lake.main.hep_proto_34_default) + (SELECT count(*) FROM svc_lake.main.hep_proto_35_default) AS n`,
    );
    return Number(r.rows[0]!.n) === packets.length;
  });

  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const r = await fetch(`${api}/transactions/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ session_id: A, timestamp: { from: T0_MS - 60_000, to: Date.now() } }),
  });
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    data: { items: Array<Record<string, unknown>> };
    meta: { pagination: { total: number } };
  };
  const items = body.data.items;
  const SYN = "Media report (synthetic, no RTP measured) · MOS 4.41 · 0 lost · jitter 0 ms";
  const rows = items.map((i) => [
    i.kind,
    i.proto_type,
    i.summary,
    `${i.src_ip}:${i.src_port} > ${i.dst_ip}:${i.dst_port}`,
  ]);
  // loadgen's two reports carry one time: either may come first.
  expect([...rows.slice(0, 2), ...rows.slice(2).toSorted((x, y) => String(x[3]).localeCompare(String(y[3])))]).toEqual([
    ["media", 34, "Media report · MOS 3.87 · 12 lost · jitter 4.5 ms", "10.30.0.2:42000 > 10.30.0.1:40000"],
    ["media", 35, "Media report · MOS 4.02 · 1 lost · jitter 2 ms", "10.30.0.1:40000 > 10.30.0.2:42000"],
    ["media", 34, SYN, "10.30.5.1:6000 > 10.30.5.2:6002"],
    ["media", 34, SYN, "10.30.5.2:6002 > 10.30.5.1:6000"],
  ]);
  expect(body.meta.pagination.total).toBe(4);
  // `qos` as for RTCP, from the same reader as POST /transactions/qos; the whole report in payload.
  expect(items[0]).toMatchObject({
    id: 1,
    node_id: 3002,
    session_id: null,
    qos: { mos: 3.87, packets_lost: 12, jitter: 4.5, fraction_lost: null, loss_pct: null },
  });
  expect(items[2]).toMatchObject({
    session_id: A,
    qos: { mos: 4.41, packets_lost: 0, jitter: 0, fraction_lost: 0, loss_pct: 0 },
  });
  expect(JSON.parse(String(items[2]!.payload))).toMatchObject({ CODEC_NAME: "PCMU", synthetic: true });

  // The OpenAPI document lists the new kind.
  const doc = (await (await fetch(`${api}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  expect(JSON.stringify(doc.paths["/api/v4/transactions/events"]?.post?.responses["200"])).toContain(
    '"kind":{"type":"string","enum":["rtcp","media","log"]}',
  );
});
