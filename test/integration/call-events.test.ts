/**
 * `POST /transactions/events` (docs/CALL-VIEW.md "RTCP and log events") over HEP ingested on real
 * UDP: the call's RTCP reports (by correlation id, and without one by the SDP address pair) and its
 * log lines (by correlation id), oldest first with summaries; another call's rows are left out, also
 * one on this call's media addresses (docs/CALL-VIEW.md "Which reports belong to a call").
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response, withSdp } from "../fixtures/sip.ts";

const PASSWORD = "call-events-password";
const T0_MS = Date.now() - 120_000;

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
    captureId: 3001,
    nodeName: "edge-ev",
    ...(o.cid ? { correlationId: o.cid } : {}),
    payload,
  });
}

test("call events: RTCP by correlation id and media address, logs by correlation id, oldest first; other calls left out", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = a.app;
  const api = `${coordinatorUrl}/api/v4`;
  const A = `ev-${crypto.randomUUID()}`;
  const OTHER = `ev-other-${crypto.randomUUID()}`;
  const p = { callId: A, from: "1001", to: "2002" };
  const rtcp = (jitter: number, fl: number) =>
    JSON.stringify({
      type: 200,
      ssrc: 11,
      report_blocks: [{ source_ssrc: 22, fraction_lost: fl, packets_lost: fl, ia_jitter: jitter }],
    });
  const packets = [
    hep(invite({ ...p, srcIp: "10.30.0.1", mediaPort: 40000 }), 0),
    hep(withSdp(response(200, "OK", "INVITE", { ...p, toTag: "t" }), "10.30.0.2", 42000), 50, {
      src: "10.30.0.2",
      dst: "10.30.0.1",
    }),
    hep(rtcp(12, 0), 5_000, { proto: 5, sport: 40001, dport: 42001, cid: A }),
    // No correlation id: found by the offer's and the answer's RTCP addresses (RTP port + 1), between the answer and the BYE.
    hep(rtcp(30, 64), 6_000, { proto: 5, sport: 40001, dport: 42001 }),
    // Another call's report on this call's addresses: its correlation id says whose it is.
    hep(rtcp(77, 0), 6_500, { proto: 5, sport: 40001, dport: 42001, cid: OTHER }),
    hep("WARNING: media timeout approaching on leg b", 7_000, { proto: 100, cid: A }),
    hep(JSON.stringify({ level: "info", message: "call released by caller" }), 9_000, { proto: 100, cid: A }),
    hep("another call's log line", 8_000, { proto: 100, cid: OTHER }),
    hep(rtcp(99, 0), 8_500, { proto: 5, src: "10.30.9.9", dst: "10.30.9.8", sport: 50001, dport: 50003, cid: OTHER }),
    hep(request("BYE", { ...p, toTag: "t", cseq: 2 }), 10_000),
  ];
  const udp = await Bun.udpSocket({});
  for (const pk of packets) udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  await waitFor("the rows in the lake", async () => {
    await lake!.sync();
    const r = await lake!.query(
      `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call) + (SELECT count(*) FROM svc_lake.main.hep_proto_5_default) + (SELECT count(*) FROM svc_lake.main.hep_proto_100_default) AS n`,
    );
    return Number(r.rows[0]!.n) === packets.length;
  });

  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const post = async (body: unknown) => {
    const r = await fetch(`${api}/transactions/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: r.status,
      json: (await r.json()) as {
        data: { items: Array<Record<string, unknown>>; sessions: string[] };
        meta: { pagination: { total: number } };
        message?: string;
      },
    };
  };
  const timestamp = { from: T0_MS - 60_000, to: Date.now() };

  const r = await post({ session_id: A, timestamp });
  expect(r.status).toBe(200);
  expect(r.json.data.items.map((i) => [i.kind, i.summary])).toEqual([
    ["rtcp", "RTCP SR · jitter 12 · loss 0.0 % · 0 lost · MOS 4.41"],
    ["rtcp", "RTCP SR · jitter 30 · loss 25.0 % · 64 lost · MOS 2.35"],
    ["log", "WARNING: media timeout approaching on leg b"],
    ["log", "call released by caller"],
  ]);
  expect(r.json.meta.pagination.total).toBe(4);
  expect(r.json.data.sessions).toEqual([A]);
  const first = r.json.data.items[0]!;
  expect(first).toMatchObject({
    id: 1,
    proto_type: 5,
    src_ip: "10.30.0.1",
    src_port: 40001,
    dst_port: 42001,
    node_id: 3001,
    qos: { jitter: 12, loss_pct: 0 },
  });
  expect(first.timestamp_us).toBe((T0_MS + 5_000) * 1000);
  expect(r.json.data.items[2]!.qos).toBeNull();
  expect(String(r.json.data.items[3]!.payload)).toContain('"level":"info"');

  // A correlation id with RTCP and logs but no SIP message: no call to anchor the window on.
  expect((await post({ session_id: OTHER, timestamp })).status).toBe(404);

  // Client mistakes are 4xx with a message.
  const missing = await post({ timestamp });
  expect(missing.status).toBe(400);
  expect((await post({ session_id: "no-such-call", timestamp })).status).toBe(404);

  // The OpenAPI document describes the route and its answer.
  const doc = (await (await fetch(`${api}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const op = doc.paths["/api/v4/transactions/events"]?.post;
  expect(op).toBeDefined();
  expect(JSON.stringify(op!.responses["200"])).toContain("summary");
});
