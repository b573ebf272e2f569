/**
 * A coordinator without a lake of its own (storage.lakehouse.enable false, only coordinator.nodes)
 * in front of two standalone nodes with SQLite catalogs (docs/ARCHITECTURE.md "A coordinator
 * without a lake"): every read goes to the nodes. A call spread over both nodes reads as in one
 * lake holding it (`one`, the same packets): the call view complete and in time order, QoS and
 * events, the PCAP with every leg, a share link, the KPIs, the histogram, statistics and SQL.
 * Only what writes into a lake (PCAP import) is refused, with 503 and the reason.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance, type ApiResult } from "./export-helpers.ts";
import { rtcpPacket as rtcp, sipPacket as sip } from "../fixtures/hep.ts";

const NOW_MS = Date.now();
const T0 = NOW_MS - 20 * 60_000;
const SMALL = {
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
};
const TOKEN_B = "node-b-token-no-lake-0123456789";

type Item = Record<string, unknown>;
let dir: TempDir;
let a: TestAppliance;
let b: TestAppliance;
let one: ApiAppliance;
let coord: ApiAppliance;

const stored = new Map<TestAppliance, number>();
/** Sends `packets` to `node` and to `one`, and waits until both stored them. */
async function send(node: TestAppliance, packets: Uint8Array[]) {
  for (const target of [node, one.a]) {
    const r = await fetch(`${target.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
    expect(r.status).toBe(202);
    const want = (stored.get(target) ?? 0) + packets.length;
    stored.set(target, want);
    await waitFor("the rows stored", async () => (await target.app.lake!.summary()).rows >= want);
  }
}

beforeAll(async () => {
  dir = tempDir("svc-no-lake-");
  a = await startTestAppliance(`${dir.path}/a`, SMALL);
  b = await startTestAppliance(`${dir.path}/b`, {
    ...SMALL,
    node: { http_server: { listen: "127.0.0.1:0", token: TOKEN_B } },
  });
  one = await startWithApi(`${dir.path}/one`, SMALL);
  coord = await startWithApi(`${dir.path}/coord`, {
    storage: { lakehouse: { enable: false } },
    coordinator: {
      nodes: [
        { name: "a", url: a.app.nodeUrl! },
        { name: "b", url: b.app.nodeUrl!, token: TOKEN_B },
      ],
    },
  });
  // Call X: INVITE and ACK seen by a, 180, 200 and BYE by b, its RTCP by b.
  const x = { callId: "X@no-lake", from: "alice", to: "bob" };
  await send(a, [sip(T0, invite(x)), sip(T0 + 2500, request("ACK", { ...x, toTag: "ttag-1" }))]);
  await send(b, [
    sip(T0 + 300, response(180, "Ringing", "INVITE", x), { src: "192.0.2.2", dst: "192.0.2.1" }),
    sip(T0 + 2000, response(200, "OK", "INVITE", x), { src: "192.0.2.2", dst: "192.0.2.1" }),
    sip(T0 + 9000, request("BYE", { ...x, toTag: "ttag-1" })),
    rtcp(T0 + 5000, x.callId, 3),
  ]);
  // KPI calls, each whole on one node: answered on a, busy on b.
  const y = { callId: "Y@no-lake", from: "u", to: "dest-1" };
  const z = { callId: "Z@no-lake", from: "u", to: "dest-2" };
  await send(a, [
    sip(T0 + 60_000, invite(y)),
    sip(T0 + 61_000, response(200, "OK", "INVITE", y)),
    sip(T0 + 70_000, request("BYE", { ...y, toTag: "ttag-1" })),
  ]);
  await send(b, [sip(T0 + 120_000, invite(z)), sip(T0 + 121_000, response(486, "Busy Here", "INVITE", z))]);
}, 60_000);

afterAll(async () => {
  for (const x of [coord, one]) await x?.[Symbol.asyncDispose]();
  for (const x of [a, b]) await x?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

const data = (r: ApiResult) => (r.json as unknown as { data: Record<string, unknown> }).data;
const meta = (r: ApiResult) =>
  (r.json as unknown as { meta?: { nodes?: Array<{ name: string; status: string }>; partial?: boolean } }).meta ?? {};
const names = (r: ApiResult) => (meta(r).nodes ?? []).map((n) => `${n.name}:${n.status}`);
const session = { session_id: "X@no-lake", timestamp: { from: T0 - 60_000, to: T0 + 60_000 } };
const line = (i: Item) => `${i.timestamp_us} ${i.sid} ${String(i.payload ?? "").split("\r\n")[0]}`;
const noUuid = (d: unknown) => JSON.parse(JSON.stringify(d, (k, v) => (k === "uuid" ? undefined : v)));

/** Records of a classic PCAP file: 24-byte global header, then a 16-byte header per record (incl_len at 8, little-endian). */
function pcapRecords(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let n = 0;
  for (let at = 24; at + 16 <= bytes.length; at += 16 + view.getUint32(at + 8, true)) n++;
  return n;
}

describe("a coordinator without a lake reads every node", () => {
  test("call view: every leg from both nodes, in time order, as in one lake; QoS and events too", async () => {
    const [over, single] = [
      await coord.api.call("POST", "/transactions/messages", session),
      await one.api.call("POST", "/transactions/messages", session),
    ];
    expect(over.status).toBe(200);
    const items = (r: ApiResult) => (data(r).items as Item[]).map(line);
    expect(items(over)).toEqual(items(single));
    expect(items(over).length).toBe(5);
    const times = (data(over).items as Item[]).map((i) => Number(i.timestamp_us));
    expect(times).toEqual([...times].sort((p, q) => p - q));
    expect(new Set((data(over).items as Item[]).map((i) => i.node ?? "")).size).toBeLessThanOrEqual(1);
    expect(meta(over).partial).toBe(false);
    expect(names(over)).toEqual(["a:ok", "b:ok"]);
    for (const path of ["/transactions/qos", "/transactions/events"]) {
      const [o, s] = [await coord.api.call("POST", path, session), await one.api.call("POST", path, session)];
      expect(o.status).toBe(200);
      expect(noUuid(data(o))).toEqual(noUuid(data(s)));
    }
    const uuid = String((data(over).items as Item[])[1]!.uuid);
    const msg = await coord.api.call("GET", `/messages/${uuid}`);
    expect(msg.status).toBe(200);
    expect(data(msg).node).toBe("b");
  });

  test("PCAP and text exports hold every leg, byte for byte those of one lake; a share link resolves", async () => {
    for (const format of ["pcap", "text"] as const) {
      const get = (x: ApiAppliance) =>
        fetch(`${x.api.base}/transactions/export/${format}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${x.api.token}` },
          body: JSON.stringify(session),
        });
      const [o, s] = [await get(coord), await get(one)];
      expect(o.status).toBe(200);
      expect(o.headers.get("x-svc-partial")).toBeNull();
      const [ob, sb] = [new Uint8Array(await o.arrayBuffer()), new Uint8Array(await s.arrayBuffer())];
      expect(Buffer.from(ob).equals(Buffer.from(sb))).toBe(true);
      if (format === "pcap") expect(pcapRecords(ob)).toBe(5);
    }
    const link = await coord.api.call("POST", "/transactions/export/link", session);
    expect(link.status).toBe(201);
    const shared = await fetch((link.json as unknown as { data: { pcap_url: string } }).data.pcap_url);
    expect(shared.status).toBe(200);
    expect(pcapRecords(new Uint8Array(await shared.arrayBuffer()))).toBe(5);
  });

  test("KPIs and failing destinations equal those of one lake; histogram, statistics and SQL answer", async () => {
    // Y and Z only: a call whose INVITE and answer are on two nodes is classified on each apart
    // (docs/ARCHITECTURE.md "Reads over several nodes", GET /statistics/kpi).
    const window = `from=${T0 + 30_000}&to=${T0 + 10 * 60_000}`;
    for (const q of [`/statistics/kpi?${window}&step=1m`, `/statistics/kpi/destinations?${window}`]) {
      const [o, s] = [await coord.api.call("GET", q), await one.api.call("GET", q)];
      expect(o.status).toBe(200);
      expect(data(o)).toEqual(data(s));
      expect(names(o)).toEqual(["a:ok", "b:ok"]);
    }
    const kpi = data(await coord.api.call("GET", `/statistics/kpi?${window}`)) as { totals: { attempts: number } };
    expect(kpi.totals.attempts).toBe(2);
    const hist = {
      filter: { proto_type: 1, event_type: "call" },
      timestamp: { from: T0 - 60_000, to: T0 + 10 * 60_000 },
      interval: "1m",
    };
    const [ho, hs] = [
      await coord.api.call("POST", "/transactions/histogram", hist),
      await one.api.call("POST", "/transactions/histogram", hist),
    ];
    expect(ho.status).toBe(200);
    expect(data(ho)).toEqual(data(hs));
    const dbs = await coord.api.call("GET", "/statistics/databases");
    expect(dbs.status).toBe(200);
    expect(names(dbs)).toEqual(["a:ok", "b:ok"]);
    const sql = await coord.api.call("POST", "/query", {
      sql: "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE '%@no-lake'",
    });
    expect(sql.status).toBe(200);
    expect((data(sql).rows as Item[]).map((r) => [r.svc_node, Number(r.n)])).toEqual([
      ["a", 5],
      ["b", 5],
    ]);
    // A statement the nodes' guard refuses is the client's mistake, as on one lake.
    expect((await coord.api.call("POST", "/query", { sql: "DROP TABLE x" })).status).toBe(400);
  });

  test("PCAP import needs a lake of its own: 503 with the reason, never a 500", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(24)]), "x.pcap");
    const r = await coord.api.call("POST", "/imports/pcap", form);
    expect(r.status).toBe(503);
    expect(r.json?.message).toContain("storage.lakehouse.enable is false");
  });
});
