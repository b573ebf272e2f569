/**
 * The reads of a coordinator over several nodes besides the list search (docs/ARCHITECTURE.md
 * "Reads over several nodes"), with real appliances on loopback: three nodes each hold part of
 * the rows — a call's legs and messages spread over them, its RTCP on another — and one more
 * appliance (`one`) holds every row in one lake. The histogram, the call view (messages, QoS,
 * events) of the coordinator over the three equal those of the one lake; a stopped node is named
 * failed and a silent one timeout with the rest returned; a node without data in the window is
 * not asked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance, type ApiResult } from "./export-helpers.ts";
import { freePort } from "../peers/process.ts";
import { rtcpPacket as rtcp, sipPacket as sip } from "../fixtures/hep.ts";

const NOW_MS = Date.now();
const T0 = NOW_MS - 20 * 60_000;
const OLD_MS = NOW_MS - 300 * 60_000;
const KPI_MS = NOW_MS - 50 * 60_000;
const TOKEN_B = "node-b-token-0123456789abcdef";
const SMALL = {
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
};
/** With the line-protocol receiver (nodes a and c, and `one`). */
const LP = { ...SMALL, ingest: { hep: { threads: 0 }, line_protocol: { enable: true, listen: "127.0.0.1:0" } } };

type Item = Record<string, unknown>;
interface NodeReport {
  name: string;
  status: string;
  rows: number;
  error?: string;
}

let dir: TempDir;
let nodes: Record<"a" | "b" | "c", TestAppliance>;
let one: ApiAppliance;
let coord: ApiAppliance;
let edge: ApiAppliance;
let slow: { port: number; stop(closeActive?: boolean): void };
const stored: Record<string, number> = { a: 0, b: 0, c: 0 };

/** Sends `packets` to node `name` and to `one`, and waits until both stored them. */
async function send(name: "a" | "b" | "c", packets: Uint8Array[]) {
  for (const [target, key] of [
    [nodes[name], name],
    [one.a, "one"],
  ] as const) {
    const r = await fetch(`${target.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
    expect(r.status).toBe(202);
    stored[key] = (stored[key] ?? 0) + packets.length;
    const want = stored[key]!;
    await waitFor(`${key} stored its rows`, async () => (await target.app.lake!.summary()).rows >= want);
  }
}

beforeAll(async () => {
  dir = tempDir("svc-reads-fan-out-");
  nodes = {
    a: await startTestAppliance(`${dir.path}/a`, LP),
    b: await startTestAppliance(`${dir.path}/b`, {
      ...SMALL,
      node: { http_server: { listen: "127.0.0.1:0", token: TOKEN_B } },
    }),
    c: await startTestAppliance(`${dir.path}/c`, LP),
  };
  one = await startWithApi(`${dir.path}/one`, LP);
  // A coordinator with a lake of its own that holds nothing: every row comes from the nodes.
  coord = await startWithApi(`${dir.path}/coord`, {
    ...SMALL,
    coordinator: {
      nodes: [
        { name: "a", url: nodes.a.app.nodeUrl! },
        { name: "b", url: nodes.b.app.nodeUrl!, token: TOKEN_B },
        { name: "c", url: nodes.c.app.nodeUrl! },
      ],
    },
  });
  slow = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  edge = await startWithApi(`${dir.path}/edge`, {
    ...SMALL,
    coordinator: {
      // Only the silent node has a short time-out: a and the dead one keep the default, so a busy
      // machine never turns a's answer into a time-out.
      nodes: [
        { name: "a", url: nodes.a.app.nodeUrl! },
        { name: "dead", url: `http://127.0.0.1:${freePort()}` },
        { name: "slow", url: `http://127.0.0.1:${slow.port}`, timeout_ms: 300 },
      ],
    },
  });
  // Call X: INVITE on a, 200 on b, BYE on c. Its B2BUA leg Y (X-CID: X) starts on c and is
  // answered on a: a finds Y's 200 only once c named Y (the correlation rounds span the nodes).
  const x = { callId: "X@reads", from: "alice", to: "bob" };
  const y = { callId: "Y@reads", from: "b2bua", to: "bob", extraHeaders: ["X-CID: X@reads"] };
  await send("a", [sip(T0, invite(x)), sip(T0 + 1200, response(200, "OK", "INVITE", { ...y, extraHeaders: [] }))]);
  await send("b", [
    sip(T0 + 1000, response(200, "OK", "INVITE", x)),
    rtcp(T0 + 5000, "X@reads", 3),
    rtcp(T0 + 10_000, "X@reads", 7),
  ]);
  await send("c", [sip(T0 + 500, invite(y), { correlationId: "X@reads" }), sip(T0 + 30_000, request("BYE", x))]);
  // Background calls for the histogram: each node its own, in different minutes; a at an old time too.
  for (const [name, n] of [
    ["a", 7],
    ["b", 5],
    ["c", 9],
  ] as const) {
    const packets = Array.from({ length: n }, (_x, i) => {
      const p = { callId: `${name}-${i}@reads`, from: "u", to: "v" };
      const at = NOW_MS - 60_000 * (i * 3 + (name === "b" ? 1 : 0)) - 1000;
      return i % 2 === 0 ? sip(at, invite(p)) : sip(at, response(i % 3 === 0 ? 486 : 180, "X", "INVITE", p));
    });
    await send(name, packets);
  }
  await send("a", [sip(OLD_MS, invite({ callId: "old@reads", from: "u", to: "v" }))]);
  // Whole calls for the KPIs, each on one node (a capture point sees a leg's signalling): answered
  // (with a BYE), busy, and unanswered, in the window [KPI_MS, KPI_MS + 10 min].
  const kpiCall = (name: string, i: number, kind: "answered" | "busy" | "ringing") => {
    const p = { callId: `kpi-${name}-${i}@reads`, from: "u", to: `dest-${i % 3}` };
    const at = KPI_MS + 60_000 * i + (name === "b" ? 7_000 : name === "c" ? 13_000 : 0);
    const out = [sip(at, invite(p)), sip(at + 300, response(180, "Ringing", "INVITE", p))];
    if (kind === "answered")
      out.push(
        sip(at + 2_000, response(200, "OK", "INVITE", p)),
        sip(at + 2_000 + 1_000 * (i + 5), request("BYE", { ...p, toTag: "ttag-1" })),
      );
    if (kind === "busy") out.push(sip(at + 1_000, response(486, "Busy Here", "INVITE", p)));
    return out;
  };
  await send("a", kpiCall("a", 0, "answered"));
  await send("b", [...kpiCall("b", 1, "answered"), ...kpiCall("b", 2, "busy"), ...kpiCall("b", 3, "answered")]);
  await send("c", [...kpiCall("c", 4, "ringing"), ...kpiCall("c", 5, "answered"), ...kpiCall("c", 6, "busy")]);
}, 180_000);

afterAll(async () => {
  for (const x of [edge, coord, one]) await x?.[Symbol.asyncDispose]();
  for (const a of Object.values(nodes ?? {})) await a?.[Symbol.asyncDispose]();
  slow?.stop(true);
  await dir?.[Symbol.asyncDispose]();
});

const meta = (r: ApiResult) => (r.json as unknown as { meta?: { nodes?: NodeReport[]; partial?: boolean } }).meta ?? {};
const byName = (r: ApiResult) => Object.fromEntries((meta(r).nodes ?? []).map((n) => [n.name, n]));
const data = (r: ApiResult) => (r.json as unknown as { data: Record<string, unknown> }).data;
const histogram = (api: ApiAppliance["api"], from: number, to: number, groupBy = "method") =>
  api.call("POST", "/transactions/histogram", {
    filter: { proto_type: 1, event_type: "call" },
    timestamp: { from, to },
    group_by: groupBy,
    interval: "1m",
  });
const session = { session_id: "X@reads", timestamp: { from: T0 - 60_000, to: T0 + 60_000 } };
/** A message as both lakes hold it (uuids differ: each lake gives its own). */
const line = (i: Item) => `${i.timestamp_us} ${i.sid} ${String(i.payload ?? "").split("\r\n")[0]}`;

describe("reads over coordinator.nodes equal those of one lake holding every row", () => {
  test("histogram: bucket and group counts summed over the nodes equal one lake's", async () => {
    const [over, single] = [
      await histogram(coord.api, NOW_MS - 3_600_000, NOW_MS),
      await histogram(one.api, NOW_MS - 3_600_000, NOW_MS),
    ];
    expect(over.status).toBe(200);
    expect(data(over)).toEqual(data(single));
    expect(data(over).total).toBeGreaterThan(26);
    expect(meta(over).partial).toBe(false);
    expect(Object.values(byName(over)).map((n) => [n.name, n.status])).toEqual([
      ["local", "ok"],
      ["a", "ok"],
      ["b", "ok"],
      ["c", "ok"],
    ]);
  });

  test("call view: every leg from every node, in time order, correlated across nodes", async () => {
    const [over, single] = [
      await coord.api.call("POST", "/transactions/messages", session),
      await one.api.call("POST", "/transactions/messages", session),
    ];
    expect(over.status).toBe(200);
    const items = (r: ApiResult) => (data(r).items as Item[]).map(line);
    expect(items(single).length).toBe(5);
    expect(items(over)).toEqual(items(single));
    expect(new Set(data(over).sessions as string[])).toEqual(new Set(["X@reads", "Y@reads"]));
    expect(data(over).window).toEqual(data(single).window);
    expect(meta(over).partial).toBe(false);
    expect(byName(over).b).toMatchObject({ status: "ok" });
  });

  test("QoS and events: the call's RTCP from the node holding it, as in one lake", async () => {
    for (const path of ["/transactions/qos", "/transactions/events"]) {
      const [over, single] = [await coord.api.call("POST", path, session), await one.api.call("POST", path, session)];
      expect(over.status).toBe(200);
      const strip = (d: Record<string, unknown>) =>
        JSON.parse(JSON.stringify(d, (k, v) => (k === "uuid" ? undefined : v)));
      expect(strip(data(over))).toEqual(strip(data(single)));
    }
    const events = await coord.api.call("POST", "/transactions/events", session);
    expect((data(events).items as Item[]).length).toBe(2);
    expect(byName(events).b?.status).toBe("ok");
  });
});

describe("exports and share links over coordinator.nodes", () => {
  const download = async (a: ApiAppliance, format: "pcap" | "text") => {
    const r = await fetch(`${a.api.base}/transactions/export/${format}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${a.api.token}` },
      body: JSON.stringify(session),
    });
    expect(r.status).toBe(200);
    return { bytes: new Uint8Array(await r.arrayBuffer()), partial: r.headers.get("x-svc-partial") };
  };

  test("the PCAP and text of a call spread over three nodes are those of one lake, byte for byte", async () => {
    for (const format of ["pcap", "text"] as const) {
      const [over, single] = [await download(coord, format), await download(one, format)];
      expect(over.partial).toBeNull();
      expect(over.bytes.length).toBeGreaterThan(500);
      expect(Buffer.from(over.bytes).equals(Buffer.from(single.bytes))).toBe(true);
    }
  });

  test("a share link of a multi-node call resolves over the nodes", async () => {
    const link = await coord.api.call("POST", "/transactions/export/link", session);
    expect(link.status).toBe(201);
    const url = (link.json as unknown as { data: { pcap_url: string } }).data.pcap_url;
    const shared = await fetch(url);
    expect(shared.status).toBe(200);
    expect(Buffer.from(await shared.arrayBuffer()).equals(Buffer.from((await download(one, "pcap")).bytes))).toBe(true);
  });

  test("a partial export names the missing nodes in x-svc-partial; a share link names them without the errors", async () => {
    const f = await download(edge, "pcap");
    expect(f.partial).toContain("dead failed (");
    expect(f.partial).toContain("slow timed out");
    const link = await edge.api.call("POST", "/transactions/export/link", session);
    const shared = await fetch((link.json as unknown as { data: { pcap_url: string } }).data.pcap_url);
    expect(shared.headers.get("x-svc-partial")).toBe("dead failed; slow timed out");
  });
});

describe("read-only SQL over coordinator.nodes", () => {
  test("runs on every node, each row labelled with its node; the rows are one lake's, split by node", async () => {
    const sql =
      "SELECT session_id, epoch_us(\"timestamp\") AS us FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE '%@reads' ORDER BY us, session_id";
    const [over, single] = [
      await coord.api.call("POST", "/query", { sql, limit: 10_000 }),
      await one.api.call("POST", "/query", { sql, limit: 10_000 }),
    ];
    expect(over.status).toBe(200);
    const d = data(over) as { columns: Array<{ name: string }>; rows: Item[] };
    expect(d.columns.map((c) => c.name)).toEqual(["svc_node", "session_id", "us"]);
    const key = (r: Item) => `${r.us} ${r.session_id}`;
    expect(d.rows.map(key).sort()).toEqual((data(single).rows as Item[]).map(key).sort());
    expect(new Set(d.rows.map((r) => r.svc_node))).toEqual(new Set(["a", "b", "c"]));
    expect(d.rows.find((r) => r.session_id === "kpi-b-1@reads")?.svc_node).toBe("b");
    expect((over.json as unknown as { meta: { partial: boolean } }).meta.partial).toBe(false);
    // A statement the guard refuses is the client's mistake, as without nodes.
    expect((await coord.api.call("POST", "/query", { sql: "DROP TABLE x" })).status).toBe(
      (await one.api.call("POST", "/query", { sql: "DROP TABLE x" })).status,
    );
  });
});

describe("line-protocol discovery over coordinator.nodes", () => {
  test("tables and columns of every node unioned: those of one lake with the same writes", async () => {
    const T = Math.floor(NOW_MS / 1000) - 60;
    const write = async (url: string, body: string) =>
      expect((await fetch(`${url}/write?db=telegraf&precision=s`, { method: "POST", body })).status).toBe(204);
    // weather on both nodes with different tags and fields; cpu on c only.
    for (const [node, body] of [
      [nodes.a, `weather,city=x temp=3.5 ${T}`],
      [nodes.c, `weather,region=eu hum=40i ${T}\ncpu,host=h usage=1.5 ${T}`],
    ] as const) {
      await write(node.app.lineProtocol!.url(), body);
      await write(one.a.app.lineProtocol!.url(), body);
    }
    const list = (api: ApiAppliance["api"]) => api.call("GET", "/line_protocol/tables?schema=telegraf");
    await waitFor(
      "both tables on the coordinator",
      async () => ((await list(coord.api)).json as unknown as { total: number }).total === 2,
    );
    const cols = (r: ApiResult) =>
      (data(r).items as Array<{ name: string; columns: Array<{ name: string }> }>).map((i) => [
        i.name,
        i.columns.map((c) => c.name).sort(),
      ]);
    const [over, single] = [await list(coord.api), await list(one.api)];
    expect(cols(over)).toEqual(cols(single));
    expect(cols(over)).toEqual([
      ["cpu", ["host", "time", "usage"]],
      ["weather", ["city", "hum", "region", "temp", "time"]],
    ]);
    expect(byName(over).a?.status).toBe("ok");
  });
});

describe("KPIs over coordinator.nodes", () => {
  test("sums per step added and ratios taken once: the KPIs of one lake with the same calls", async () => {
    const q = `/statistics/kpi?from=${KPI_MS - 60_000}&to=${KPI_MS + 10 * 60_000}&step=1m`;
    const [over, single] = [await coord.api.call("GET", q), await one.api.call("GET", q)];
    expect(over.status).toBe(200);
    expect(data(over)).toEqual(data(single));
    const totals = data(over).totals as { attempts: number; asr: number; acd_s: number };
    expect(totals.attempts).toBe(7);
    // 4 answered of the 7 (none pending: the unanswered one is older than the INVITE time-out).
    expect(totals.asr).toBeCloseTo(4 / 7, 10);
    expect(meta(over).partial).toBe(false);
    expect(byName(over).b).toMatchObject({ status: "ok" });
  });
});

describe("nodes that fail, time out or hold nothing in the window", () => {
  test("a stopped node is failed, a silent one timeout, the rest is answered as partial", async () => {
    const r = await histogram(edge.api, NOW_MS - 3_600_000, NOW_MS);
    expect(r.status).toBe(200);
    const n = byName(r);
    expect(n.a).toMatchObject({ status: "ok" });
    expect(n.dead?.status).toBe("failed");
    expect(n.slow?.status).toBe("timeout");
    expect(meta(r).partial).toBe(true);
    // Node a's rows of the hour: 7 background, 2 of the call X, 4 of its KPI call.
    expect(data(r).total).toBe(7 + 2 + 4);
    const call = await edge.api.call("POST", "/transactions/messages", session);
    expect(call.status).toBe(200);
    expect(meta(call).partial).toBe(true);
    expect(byName(call).dead?.status).toBe("failed");
    // Only a answered: Y's 200 on a is not found, as only c (not asked here) names the leg Y.
    expect((data(call).items as Item[]).map((i) => i.sid)).toEqual(["X@reads"]);
  });

  test("a node without data in the window is skipped, not asked", async () => {
    const r = await histogram(coord.api, OLD_MS - 60_000, OLD_MS + 60_000);
    expect(r.status).toBe(200);
    expect(data(r).total).toBe(1);
    const n = byName(r);
    expect(n.a).toMatchObject({ status: "ok", rows: 1 });
    expect(n.b).toMatchObject({ status: "skipped", error: "no data in the window" });
    expect(n.c).toMatchObject({ status: "skipped" });
  });

  test("the node reads need the node token: missing is 401", async () => {
    const r = await fetch(`${nodes.b.app.nodeUrl}/api/v1/histogram`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ filter: { proto_type: 1 }, timestamp: { from: T0, to: NOW_MS }, interval: "1m" }),
    });
    expect(r.status).toBe(401);
    const ok = await fetch(`${nodes.b.app.nodeUrl}/api/v1/transactions/rows`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN_B}` },
      body: JSON.stringify({
        tables: ["main.hep_proto_1_call"],
        ids: ["X@reads"],
        from_us: (T0 - 1000) * 1000,
        to_us: (T0 + 60_000) * 1000,
        kind: "anchor",
      }),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { rows: unknown[] }).rows.length).toBe(1);
  });
});
