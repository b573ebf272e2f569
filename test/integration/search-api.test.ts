import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response, withSdp } from "../fixtures/sip.ts";

const PASSWORD = "search-test-password";
const NOW_MS = Date.now();

function hep(
  payload: string,
  i: number,
  o: { proto?: number; src?: string; dst?: string; sport?: number; dport?: number; correlationId?: string } = {},
) {
  return encodeHep3({
    srcIp: o.src ?? "10.0.0.1",
    dstIp: o.dst ?? "10.0.0.2",
    srcPort: o.sport ?? 5060,
    dstPort: o.dport ?? 5060,
    timestampUs: (NOW_MS - 120_000) * 1000 + i * 10_000,
    protoType: o.proto ?? 1,
    captureId: 7,
    nodeName: "edge-7",
    ...(o.correlationId ? { correlationId: o.correlationId } : {}),
    payload,
  });
}

describe("search and transaction API over ingested HEP", () => {
  test("search by fields, the call view with correlated legs, message by id, decoded, QoS", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const api = `${coordinatorUrl}/api/v4`;
    const A = `legA-${crypto.randomUUID()}@pbx`;
    const B = `${A}_b2b-1`; // B2BUA derived Call-ID
    const C = `legC-${crypto.randomUUID()}`; // third leg linked by X-CID
    const packets = [
      hep(invite({ callId: A, from: "1001", to: "2002", fromTag: "fa", mediaPort: 40000 }), 0),
      hep(response(100, "Trying", "INVITE", { callId: A, from: "1001", to: "2002", fromTag: "fa" }), 1, {
        src: "10.0.0.2",
        dst: "10.0.0.1",
      }),
      hep(invite({ callId: B, from: "1001", to: "2002", fromTag: "fb", srcIp: "10.0.0.2", mediaPort: 42000 }), 2, {
        src: "10.0.0.2",
        dst: "10.0.0.3",
      }),
      hep(invite({ callId: C, from: "1001", to: "3003", fromTag: "fc", extraHeaders: [`X-CID: ${A}`] }), 3, {
        src: "10.0.0.2",
        dst: "10.0.0.4",
      }),
      hep(
        response(486, "Busy Here", "INVITE", { callId: C, from: "1001", to: "3003", fromTag: "fc", toTag: "tc" }),
        4,
        { src: "10.0.0.4", dst: "10.0.0.2" },
      ),
      hep(response(200, "OK", "INVITE", { callId: B, from: "1001", to: "2002", fromTag: "fb", toTag: "tb" }), 5, {
        src: "10.0.0.3",
        dst: "10.0.0.2",
      }),
      // The B2BUA answers leg A with its own media address: the pair the report without correlation id flows on.
      hep(
        withSdp(
          response(200, "OK", "INVITE", { callId: A, from: "1001", to: "2002", fromTag: "fa", toTag: "ta" }),
          "10.0.0.2",
          42000,
        ),
        6,
        { src: "10.0.0.2", dst: "10.0.0.1" },
      ),
      hep(request("ACK", { callId: A, from: "1001", to: "2002", fromTag: "fa", toTag: "ta", cseq: 1 }), 7),
      hep(
        JSON.stringify({
          type: 200,
          ssrc: 111,
          report_blocks: [{ source_ssrc: 222, fraction_lost: 3, packets_lost: 5, ia_jitter: 17 }],
        }),
        8,
        {
          proto: 5,
          src: "10.0.0.1",
          dst: "10.0.0.2",
          sport: 40001,
          dport: 42001,
          correlationId: A,
        },
      ),
      hep(
        JSON.stringify({
          type: 200,
          ssrc: 111,
          report_blocks: [{ source_ssrc: 222, fraction_lost: 1, packets_lost: 6, ia_jitter: 25 }],
        }),
        9,
        {
          proto: 5,
          src: "10.0.0.1",
          dst: "10.0.0.2",
          sport: 40001,
          dport: 42001,
        },
      ),
      hep(request("BYE", { callId: A, from: "1001", to: "2002", fromTag: "fa", toTag: "ta", cseq: 2 }), 10),
    ];
    const udp = await Bun.udpSocket({});
    for (const p of packets) udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("all rows visible", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call) + (SELECT count(*) FROM svc_lake.main.hep_proto_5_default) AS n`,
      );
      return r.rows[0]!.n === 11;
    });
    // Half the rows in Parquet, half in the buffer: search must see both.
    await lake!.flush();

    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    expect(login.status).toBe(201);
    const token = ((await login.json()) as { token: string }).token;
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return {
        status: r.status,
        json: (await r.json()) as {
          data: Record<string, unknown> & { items: Array<Record<string, unknown>>; keys: string[] };
          meta: { pagination: { total: number } };
        },
      };
    };
    const range = { from: NOW_MS - 3_600_000, to: NOW_MS };
    const search = (filter: Record<string, unknown>, limit = 100) =>
      call("POST", "/transactions/search", {
        filter: { proto_type: 1, event_type: "call", ...filter },
        param: { limit },
        timestamp: range,
      });

    const byCallId = await search({ call_id: A });
    expect(byCallId.status).toBe(200);
    expect(byCallId.json.data.items.map((i) => i.event).sort()).toEqual(["100", "200", "ACK", "BYE", "INVITE"]);
    const row = byCallId.json.data.items.find((i) => i.event === "INVITE")!;
    expect(row).toMatchObject({
      sid: A,
      session_id: A,
      caller: "1001",
      callee: "2002",
      src_ip: "10.0.0.1",
      node_id: 7,
      storage_lake: "svc_lake",
      storage_volume: "main.hep_proto_1_call",
    });
    expect(String(row.payload)).toStartWith(`INVITE sip:2002@example.net SIP/2.0`);
    expect((row.data_extra as Record<string, unknown>).from_tag).toBe("fa");
    expect(byCallId.json.data.keys).toContain("timestamp");
    expect(byCallId.json.meta.pagination.total).toBe(5);
    // POST /search is the same operation (docs/API.md "Search paths"): the same rows and total.
    const viaSearch = await call("POST", "/search", {
      filter: { proto_type: 1, event_type: "call", call_id: A },
      param: { limit: 100 },
      timestamp: range,
    });
    expect(viaSearch.status).toBe(200);
    expect(viaSearch.json.data.items).toEqual(byCallId.json.data.items);
    expect(viaSearch.json.meta.pagination.total).toBe(5);
    expect((await call("POST", "/search", { filter: { proto_type: 1, event_type: "nope" } })).status).toBe(400);

    expect((await search({ call_id: "legA-%" })).json.data.items.length).toBe(7); // A and its B2BUA leg
    expect((await search({ call_id: `${A};${C}` })).json.data.items.length).toBe(7);
    expect((await search({ to_user: "3003" })).json.data.items.map((i) => i.event).sort()).toEqual(["486", "INVITE"]);
    expect((await search({ methods: ["ACK", "BYE"] })).json.data.items.length).toBe(2);
    expect((await search({ response_code: 486 })).json.data.items.length).toBe(1);
    expect((await search({ src_ip: "10.0.0.3" })).json.data.items.map((i) => i.session_id)).toEqual([B]);
    expect((await search({ payload: "Busy Here" })).json.data.items.length).toBe(1);
    expect((await search({ no_such_field: "ignored", call_id: C })).json.data.items.length).toBe(2);
    const newest = await search({}, 3);
    expect(newest.json.data.items.map((i) => i.event)).toEqual(["BYE", "ACK", "200"]);

    // GET /transactions
    const list = await call("GET", `/transactions?from=${range.from}&to=${range.to}&call_id=${encodeURIComponent(B)}`);
    expect(list.json.data.items.map((i) => i.event)).toEqual(["200", "INVITE"]);

    // The call view: A, its B2BUA leg B and the X-CID leg C, oldest first.
    const tx = await call("POST", "/transactions/messages", { session_id: A, timestamp: range });
    expect(tx.status).toBe(200);
    expect(new Set(tx.json.data.sessions as string[])).toEqual(new Set([A, B, C]));
    expect(
      tx.json.data.items.map((i) => `${i.session_id === A ? "A" : i.session_id === B ? "B" : "C"}:${i.event}`),
    ).toEqual(["A:INVITE", "A:100", "B:INVITE", "C:INVITE", "C:486", "B:200", "A:200", "A:ACK", "A:BYE"]);
    const excluded = await call("POST", "/transactions/messages", {
      session_id: A,
      timestamp: range,
      whitelist: ["10.0.0.4"],
    });
    expect(excluded.json.data.items.some((i) => i.dst_ip === "10.0.0.4" || i.src_ip === "10.0.0.4")).toBe(false);

    // Message by id and decoded.
    const one = await call("GET", `/messages/${row.uuid}`);
    expect(one.status).toBe(200);
    expect(one.json.data).toMatchObject({ uuid: row.uuid, session_id: A, event: "INVITE" });
    const dec = await call("GET", `/messages/${row.uuid}/decoded`);
    const decoded = dec.json.data.decoded as {
      kind: string;
      method: string;
      headers: Array<{ name: string; value: string }>;
      sdp: { media: Array<{ port: number }> };
    };
    expect(decoded.kind).toBe("request");
    expect(decoded.headers.find((h) => h.name === "Call-ID")?.value).toBe(A);
    expect(decoded.sdp.media[0]!.port).toBe(40000);
    expect((await call("GET", `/messages/0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee`)).status).toBe(404);
    expect((await call("GET", `/messages/not-a-uuid`)).status).toBe(404);

    // QoS: both RTCP reports (one by correlation id, one by SDP media address) in one stream.
    const qos = await call("POST", "/transactions/qos", { session_id: A, timestamp: range });
    expect(qos.status).toBe(200);
    const streams = qos.json.data.streams as Array<{
      points: Array<{ jitter: number }>;
      summary: { max_jitter: number; total_lost: number };
    }>;
    expect(streams.length).toBe(1);
    expect(streams[0]!.points.map((p) => p.jitter)).toEqual([17, 25]);
    expect(streams[0]!.summary).toMatchObject({ max_jitter: 25, total_lost: 6 });

    // Client mistakes are 4xx with a message; no credentials is 401.
    expect((await call("POST", "/transactions/search", { filter: { proto_type: 1, event_type: "nope" } })).status).toBe(
      400,
    );
    expect(
      (await call("POST", "/transactions/search", { filter: { response_code: "abc" }, timestamp: range })).status,
    ).toBe(400);
    expect((await call("POST", "/transactions/search", { timestamp: { from: "yesterday-ish" } })).status).toBe(400);
    expect((await call("POST", "/transactions/messages", { session_id: "nothing-like-this" })).status).toBe(404);
    expect((await fetch(`${api}/transactions/search`, { method: "POST", body: "{}" })).status).toBe(401);
  });
});

test("window bounds the lake cannot print (fractional ms, year 123, year 245669) are answered, not refused", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const api = `${a.app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const post = (path: string, body: unknown) =>
    fetch(`${api}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  // Found by schemathesis: each was a 400 "cannot encode ... as a timestamp statistic".
  for (const timestamp of [
    { from: 6.163550369319077e-77, to: null },
    { from: null, to: "0123-01-11T04:10:22.984957Z" },
    { from: "2024-01-01T00:00:00Z", to: 7e15 },
  ]) {
    const r = await post("/transactions/search", { filter: {}, timestamp });
    expect([r.status, await r.text()]).toEqual([200, expect.stringContaining('"items"')]);
    // No such call in the window: 404, as for any unknown Call-ID (was the 400).
    const m = await post("/transactions/messages", { session_id: "x", timestamp });
    expect(m.status).toBe(404);
  }
});
