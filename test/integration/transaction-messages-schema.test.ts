/**
 * The documented 2xx body of `POST /transactions/messages` (TransactionMessagesResponse, whose
 * items are the rows the call view and its ladder read; docs/API.md "Search results") against
 * the real answer of an appliance: every row passes the item schema, the schema keeps every
 * column (a registration row's too), and it refuses rows the server never sends, so it says
 * something about the members the UI's TxMessage type is derived from; data_extra's capture point
 * and CSeq members are those the copy check reads (docs/CALL-VIEW.md "Duplicates").
 */
import { expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { sha256Hex } from "../../src/auth/index.ts";
import { TransactionMessagesResponse } from "../../src/api/search/model.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { findDuplicates } from "../../ui/src/lib/duplicates.ts";
import type { TxMessage } from "../../ui/src/lib/transaction.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";

const PASSWORD = "messages-schema-password";
const NOW_MS = Date.now();

/** The item schema of the response, as the route publishes it (not a separate export). */
const ITEM = TransactionMessagesResponse.properties.data.properties.items.items as TSchema;
const errorsOf = (schema: TSchema, value: unknown) =>
  [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);

test("the call view's rows pass the published item schema, which keeps every column and names what the UI reads", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = a.app;
  const api = `${coordinatorUrl}/api/v4`;
  const call = `schema-${crypto.randomUUID()}`;
  const reg = `reg-${crypto.randomUUID()}`;
  const p = { callId: call, from: "1001", to: "2002", fromTag: "fa" };
  const sent: Array<{ payload: string; captureId: number; nodeName?: string; src?: string }> = [
    { payload: invite(p), captureId: 2001, nodeName: "edge-a" },
    // The same INVITE seen by a second capture point (docs/CALL-VIEW.md "Duplicates").
    { payload: invite(p), captureId: 2002, nodeName: "edge-b" },
    {
      payload: response(200, "OK", "INVITE", { ...p, toTag: "tb" }),
      captureId: 2001,
      nodeName: "edge-a",
      src: "10.0.0.2",
    },
    // No node name: data_extra has no node_name member.
    { payload: request("BYE", { ...p, toTag: "tb", cseq: 2 }), captureId: 2001 },
    {
      payload: request("REGISTER", {
        callId: reg,
        from: "1001",
        to: "1001",
        fromTag: "r",
        cseq: 1,
        extraHeaders: ["Contact: <sip:1001@10.0.0.9:5060>", "Expires: 3600"],
      }),
      captureId: 2001,
    },
  ];
  const udp = await Bun.udpSocket({});
  sent.forEach((s, i) => {
    const packet = encodeHep3({
      srcIp: s.src ?? "10.0.0.1",
      dstIp: s.src ? "10.0.0.1" : "10.0.0.2",
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: (NOW_MS - 60_000) * 1000 + i * 20_000,
      protoType: 1,
      captureId: s.captureId,
      ...(s.nodeName ? { nodeName: s.nodeName } : {}),
      payload: s.payload,
    });
    udp.send(packet, ingest!.listeners.udp!.port(), "127.0.0.1");
  });
  udp.close();
  await waitFor("the call's rows and the registration visible", async () => {
    await lake!.sync();
    const r = await lake!.query(
      `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call) AS calls, (SELECT count(*) FROM svc_lake.main.hep_proto_1_registration) AS regs`,
    );
    return r.rows[0]!.calls === 4 && r.rows[0]!.regs === 1;
  });

  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const messages = async (body: unknown) => {
    const r = await fetch(`${api}/transactions/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: r.status,
      json: (await r.json()) as { data: { items: Array<Record<string, unknown>>; keys: string[] } },
    };
  };

  const callView = await messages({ session_id: call });
  expect(callView.status).toBe(200);
  expect(errorsOf(TransactionMessagesResponse, callView.json)).toEqual([]);
  expect(callView.json.data.items.map((m) => m.event)).toEqual(["INVITE", "INVITE", "200", "BYE"]);
  const regView = await messages({ session_id: reg, event_type: "registration" });
  expect(regView.status).toBe(200);
  expect(errorsOf(TransactionMessagesResponse, regView.json)).toEqual([]);

  for (const view of [callView, regView]) {
    for (const item of view.json.data.items) {
      expect(errorsOf(ITEM, item)).toEqual([]);
      // The response check keeps the table's other columns (additionalProperties).
      expect(Object.keys(item)).toEqual(view.json.data.keys);
    }
  }
  expect(regView.json.data.keys).toEqual(expect.arrayContaining(["aor", "contact", "expires", "user_agent"]));
  expect(regView.json.data.items[0]).toMatchObject({ aor: "sip:1001@example.net", expires: 3600 });

  // The schema says what a row is: these are not rows the server sends.
  const row = callView.json.data.items[0]!;
  const without = (k: string) => Object.fromEntries(Object.entries(row).filter(([key]) => key !== k));
  for (const k of [
    "uuid",
    "timestamp_us",
    "session_id",
    "src_ip",
    "dst_ip",
    "src_port",
    "dst_port",
    "event",
    "method",
    "cseq_method",
    "payload",
    "node_id",
    "data_extra",
  ]) {
    expect([k, Value.Check(ITEM, without(k))]).toEqual([k, false]);
  }
  for (const [k, v] of [
    ["uuid", null],
    ["timestamp_us", null],
    ["session_id", null],
    ["src_ip", null],
    ["src_port", "sip"],
    ["event", null],
    ["proto_type", null],
    ["node_id", "edge-a"],
  ] as const) {
    // (Elysia's t.Integer also takes integer text, for query strings; the document says integer.)
    expect([k, Value.Check(ITEM, { ...row, [k]: v })]).toEqual([k, false]);
  }

  // data_extra: the capture point's members and the CSeq number are what the ingest writes; the
  // copy check (ui/src/lib/duplicates.ts) reads them from these very rows.
  expect(callView.json.data.items.map((m) => m.data_extra)).toMatchObject([
    { node_name: "edge-a", capture_id: 2001, cseq: 1 },
    { node_name: "edge-b", capture_id: 2002, cseq: 1 },
    { node_name: "edge-a", capture_id: 2001, cseq: 1 },
    { capture_id: 2001, cseq: 2 },
  ]);
  const rows = callView.json.data.items as TxMessage[];
  const copies = findDuplicates(rows);
  expect([...copies.copyOf]).toEqual([[rows[1]!.uuid, rows[0]!.uuid]]);
  expect(copies.seenBy.get(rows[0]!.uuid)).toEqual(["capture 2001 (edge-a)", "capture 2002 (edge-b)"]);
  const extra = row.data_extra as Record<string, unknown>;
  for (const [k, v] of [
    ["node_name", 7],
    ["capture_id", "edge-a"],
    ["cseq", "INVITE"],
  ] as const) {
    expect([k, Value.Check(ITEM, { ...row, data_extra: { ...extra, [k]: v } })]).toEqual([k, false]);
  }
  expect(Value.Check(ITEM, { ...row, data_extra: [extra] })).toBe(false);
  // Text that was not JSON, and no data_extra, are answered as they are.
  expect(errorsOf(ITEM, { ...row, data_extra: "{not json" })).toEqual([]);
  expect(errorsOf(ITEM, { ...row, data_extra: null })).toEqual([]);

  // The published document says the same (GET /openapi.json).
  type Schema = { properties: Record<string, Schema>; items: Schema; required: string[] };
  const doc = (await (await fetch(`${api}/openapi.json`)).json()) as {
    paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: Schema }> }> } }>;
  };
  const published =
    doc.paths["/api/v4/transactions/messages"]!.post.responses["200"]!.content["application/json"]!.schema;
  const item = published.properties.data!.properties.items!.items;
  expect(item.required).toEqual(
    expect.arrayContaining([
      "uuid",
      "timestamp_us",
      "session_id",
      "src_ip",
      "dst_ip",
      "src_port",
      "dst_port",
      "event",
      "payload",
      "node_id",
      "data_extra",
    ]),
  );
  const extraObject = (item.properties.data_extra as unknown as { anyOf: Schema[] }).anyOf[0]!;
  expect(Object.keys(extraObject.properties)).toEqual(["node_name", "capture_id", "cseq"]);
  expect<unknown>(item.properties.src_port).toEqual({
    anyOf: [{ type: "integer" }, { type: "null" }],
    description: "source port",
  });
}, 120_000);
