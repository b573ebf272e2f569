/**
 * The statistics and KPI destinations of a coordinator over several nodes (docs/ARCHITECTURE.md
 * "Reads over several nodes"), with real appliances on loopback: two nodes (`a`, `b`) each hold
 * part of the rows in a lake of their own, one more appliance (`one`) holds every row in one
 * lake, and a coordinator (`coord`) in front of the two answers what `one` answers. A second
 * coordinator (`edge`) has a node that is not there: its answers are partial and name it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CoordinatorClient } from "../../src/cli/coordinator-client.ts";
import { fetchCallMessages } from "../../src/cli/search-pcap.ts";
import type { SearchOptions } from "../../src/cli/search-options.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance, type ApiResult } from "./export-helpers.ts";
import { freePort } from "../peers/process.ts";
import { rtcpPacket as rtcp, sipPacket as sip } from "../fixtures/hep.ts";

const NOW_MS = Date.now();
const KPI_MS = NOW_MS - 50 * 60_000;
const SMALL = {
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
};
/** With the OTLP receiver (the nodes and `one`). */
const OTLP = { ...SMALL, ingest: { hep: { threads: 0 }, otlp: { enable: true } } };

type Item = Record<string, unknown>;
interface NodeReport {
  name: string;
  status: string;
  error?: string;
}

let dir: TempDir;
let nodes: Record<"a" | "b", TestAppliance>;
let one: ApiAppliance;
let coord: ApiAppliance;
let edge: ApiAppliance;
const stored: Record<string, number> = {};

/** Sends `packets` to node `name` and to `one`, and waits until both stored them. */
async function send(name: "a" | "b", packets: Uint8Array[]) {
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

/** Posts one OTLP/HTTP JSON request to node `name` and to `one`, and waits until both stored its row. */
async function sendOtlp(name: "a" | "b", signal: "traces" | "logs", body: unknown) {
  for (const [target, key] of [
    [nodes[name], name],
    [one.a, "one"],
  ] as const) {
    const r = await fetch(`${target.app.otlp!.httpUrl()}/v1/${signal}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    stored[key] = (stored[key] ?? 0) + 1;
    const want = stored[key]!;
    await waitFor(`${key} stored its OTLP row`, async () => (await target.app.lake!.summary()).rows >= want);
  }
}

/** One call to `to` ending with `code` (200: answered), i minutes into the KPI window. */
let calls = 0;
const call = (to: string, code: number) => {
  const p = { callId: `stats-${++calls}@fan`, from: "u", to };
  const at = KPI_MS + 60_000 * calls;
  return [
    sip(at, invite(p)),
    sip(at + 300, response(180, "Ringing", "INVITE", p)),
    sip(at + 1_000, response(code, code === 200 ? "OK" : "Failed", "INVITE", p)),
  ];
};

beforeAll(async () => {
  dir = tempDir("svc-stats-fan-out-");
  nodes = { a: await startTestAppliance(`${dir.path}/a`, OTLP), b: await startTestAppliance(`${dir.path}/b`, OTLP) };
  one = await startWithApi(`${dir.path}/one`, OTLP);
  const both = [
    { name: "a", url: nodes.a.app.nodeUrl! },
    { name: "b", url: nodes.b.app.nodeUrl! },
  ];
  // A coordinator with a lake of its own that holds nothing: every row comes from the nodes.
  coord = await startWithApi(`${dir.path}/coord`, { ...SMALL, coordinator: { nodes: both } });
  edge = await startWithApi(`${dir.path}/edge`, {
    ...SMALL,
    coordinator: { node_timeout_ms: 2_000, nodes: [both[0], { name: "dead", url: `http://127.0.0.1:${freePort()}` }] },
  });
  // Failing destinations: on a alone dest-1 leads (2 failures); over both dest-2 does (3), its
  // most frequent failure code 404 only once b's are added; dest-1's answered call is on b only.
  await send("a", [
    ...call("dest-1", 503),
    ...call("dest-1", 503),
    ...call("dest-2", 404),
    ...call("dest-3", 200),
    ...call("dest-3", 200),
  ]);
  await send("b", [...call("dest-2", 404), ...call("dest-2", 503), ...call("dest-3", 500), ...call("dest-1", 200)]);
  // RTCP on b only: a table only one node has.
  await send("b", [rtcp(KPI_MS + 5_000, "stats-1@fan"), rtcp(KPI_MS + 6_000, "stats-1@fan")]);
  // OpenTelemetry rows of call stats-1 (its SIP on a): a span on a, a span and a log record on b.
  const at = (ms: number) => String(BigInt(KPI_MS + 60_000 + ms) * 1_000_000n);
  const attrs = [{ key: "sip.call_id", value: { stringValue: "stats-1@fan" } }];
  const resource = (service: string) => ({ attributes: [{ key: "service.name", value: { stringValue: service } }] });
  const span = (service: string, name: string, ms: number, spanId: string) => ({
    resourceSpans: [
      {
        resource: resource(service),
        scopeSpans: [
          {
            spans: [
              {
                traceId: "5b8efff798038103d269b633813fc60c",
                spanId,
                name,
                kind: 2,
                startTimeUnixNano: at(ms),
                endTimeUnixNano: at(ms + 40),
                attributes: attrs,
              },
            ],
          },
        ],
      },
    ],
  });
  await sendOtlp("a", "traces", span("proxy", "INVITE", 100, "eee19b7ec3c1b174"));
  await sendOtlp("b", "traces", span("registrar", "lookup", 200, "eee19b7ec3c1b175"));
  await sendOtlp("b", "logs", {
    resourceLogs: [
      {
        resource: resource("registrar"),
        scopeLogs: [
          {
            logRecords: [
              {
                timeUnixNano: at(300),
                severityNumber: 9,
                severityText: "INFO",
                body: { stringValue: "routed" },
                attributes: attrs,
              },
            ],
          },
        ],
      },
    ],
  });
  for (const x of [nodes.a.app, nodes.b.app, one.a.app]) await x.lake!.flush();
}, 180_000);

afterAll(async () => {
  for (const x of [edge, coord, one]) await x?.[Symbol.asyncDispose]();
  for (const a of Object.values(nodes ?? {})) await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

const meta = (r: ApiResult) => (r.json as unknown as { meta?: { nodes?: NodeReport[]; partial?: boolean } }).meta ?? {};
const byName = (r: ApiResult) => Object.fromEntries((meta(r).nodes ?? []).map((n) => [n.name, n]));
const data = (r: ApiResult) => (r.json as unknown as { data: Record<string, unknown> }).data;
const items = (r: ApiResult) => data(r).items as Item[];

describe("/statistics/* over coordinator.nodes", () => {
  test("databases and metrics: the tables and columns of every node, those of one lake", async () => {
    for (const path of ["/statistics/databases", "/statistics/metrics?db=main"]) {
      const [over, single] = [await coord.api.call("GET", path), await one.api.call("GET", path)];
      expect(over.status).toBe(200);
      expect(items(over)).toEqual(items(single));
      expect(meta(over).partial).toBe(false);
      expect(byName(over).b?.status).toBe("ok");
    }
    const metrics = await coord.api.call("GET", "/statistics/metrics?db=main");
    expect(items(metrics).map((m) => m.measurement)).toContain("hep_proto_5_default");
  });

  test("measurements: committed rows add over the nodes, time spans widen, files add", async () => {
    const [over, single] = [
      await coord.api.call("GET", "/statistics/measurements?db=main"),
      await one.api.call("GET", "/statistics/measurements?db=main"),
    ];
    expect(over.status).toBe(200);
    const figures = (r: ApiResult) =>
      items(r).map((m) => [m.name, m.columns, m.committed_rows, m.min_time, m.max_time]);
    expect(figures(over)).toEqual(figures(single));
    const call = items(over).find((m) => m.name === "hep_proto_1_call")!;
    expect(call.committed_rows).toBe(27);
    const files = async (t: TestAppliance) =>
      (await t.app.lake!.stats()).find((s) => s.key === "main.hep_proto_1_call")?.files ?? 0;
    expect(call.data_files).toBe((await files(nodes.a)) + (await files(nodes.b)));
  });

  test("statistics query: runs on every node, each row labelled with its node", async () => {
    const raw = "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call";
    const r = await coord.api.call("POST", "/statistics/query", { raw });
    expect(r.status).toBe(200);
    expect((data(r).rows as Item[]).map((x) => [x.svc_node, Number(x.n)]).sort()).toEqual([
      ["a", 15],
      ["b", 12],
      ["local", 0],
    ]);
    expect(meta(r).partial).toBe(false);
  });

  test("a node that does not answer is named and the answer is partial", async () => {
    const r = await edge.api.call("GET", "/statistics/measurements?db=main");
    expect(r.status).toBe(200);
    expect(meta(r).partial).toBe(true);
    expect(byName(r).dead?.status).toBe("failed");
    expect(items(r).find((m) => m.name === "hep_proto_1_call")?.committed_rows).toBe(15);
    // A schema no answering node has is 404, naming the node that may hold it.
    const none = await edge.api.call("GET", "/statistics/metrics?db=nosuch");
    expect(none.status).toBe(404);
    expect(none.json?.message).toContain("these nodes did not answer: dead");
  });
});

describe("KPI destinations over coordinator.nodes", () => {
  const q = `/statistics/kpi/destinations?from=${KPI_MS}&to=${KPI_MS + 20 * 60_000}`;

  test("counts add over the nodes before the ranking: the destinations of one lake", async () => {
    const [over, single] = [await coord.api.call("GET", q), await one.api.call("GET", q)];
    expect(over.status).toBe(200);
    expect(items(over)).toEqual(items(single));
    expect(items(over)).toEqual([
      { destination: "dest-2", attempts: 3, failures: 3, answered: 0, failure_ratio: 1, top_code: 404, no_response: 0 },
      {
        destination: "dest-1",
        attempts: 3,
        failures: 2,
        answered: 1,
        failure_ratio: 2 / 3,
        top_code: 503,
        no_response: 0,
      },
      {
        destination: "dest-3",
        attempts: 3,
        failures: 1,
        answered: 2,
        failure_ratio: 1 / 3,
        top_code: 500,
        no_response: 0,
      },
    ]);
    const top = await coord.api.call("GET", `${q}&limit=1`);
    expect(items(top).map((d) => d.destination)).toEqual(["dest-2"]);
    expect(meta(over).partial).toBe(false);
  });

  test("a node that does not answer is named and the answer is partial", async () => {
    const r = await edge.api.call("GET", q);
    expect(r.status).toBe(200);
    expect(meta(r).partial).toBe(true);
    expect(byName(r).dead?.status).toBe("failed");
    expect(items(r).map((d) => [d.destination, d.failures])).toEqual([
      ["dest-1", 2],
      ["dest-2", 1],
    ]);
  });
});

describe("messages by uuid and OTLP rows over coordinator.nodes", () => {
  /** The uuid of the INVITE of `callId`, as the coordinator's list search gives it. */
  const uuidOf = async (callId: string) => {
    const r = await coord.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: "call", call_id: callId },
      timestamp: { from: KPI_MS, to: NOW_MS },
    });
    expect(r.status).toBe(200);
    return String(items(r).find((i) => String(i.payload ?? "").startsWith("INVITE"))!.uuid);
  };

  test("a message held by a node is found by its uuid, decoded too, with meta.nodes", async () => {
    const id = await uuidOf("stats-6@fan");
    const r = await coord.api.call("GET", `/messages/${id}`);
    expect(r.status).toBe(200);
    expect(data(r)).toMatchObject({ uuid: id, sid: "stats-6@fan", node: "b" });
    expect(meta(r).partial).toBe(false);
    expect(byName(r).b?.status).toBe("ok");
    const decoded = await coord.api.call("GET", `/messages/${id}/decoded`);
    expect(decoded.status).toBe(200);
    expect(JSON.stringify(data(decoded).decoded)).toContain("stats-6@fan");
    expect((await coord.api.call("GET", "/messages/01890000-0000-7000-8000-000000000000")).status).toBe(404);
  });

  test("not found while a node did not answer: 404 naming it; found elsewhere: partial", async () => {
    const onB = await uuidOf("stats-6@fan");
    const missing = await edge.api.call("GET", `/messages/${onB}`);
    expect(missing.status).toBe(404);
    expect(missing.json?.message).toContain("dead failed");
    const onA = await edge.api.call("GET", `/messages/${await uuidOf("stats-1@fan")}`);
    expect(onA.status).toBe(200);
    expect(meta(onA).partial).toBe(true);
    expect(byName(onA).dead?.status).toBe("failed");
  });

  test("OTLP spans and log records of a call from every node: those of one lake", async () => {
    const body = { session_id: "stats-1@fan", timestamp: { from: KPI_MS, to: KPI_MS + 5 * 60_000 } };
    const [over, single] = [
      await coord.api.call("POST", "/transactions/otlp", body),
      await one.api.call("POST", "/transactions/otlp", body),
    ];
    expect(over.status).toBe(200);
    expect(items(over)).toEqual(items(single));
    expect(items(over).map((i) => [i.kind, i.service_name, i.text])).toEqual([
      ["span", "proxy", "INVITE"],
      ["span", "registrar", "lookup"],
      ["log", "registrar", "routed"],
    ]);
    expect(meta(over).partial).toBe(false);
    expect(byName(over).b?.status).toBe("ok");
    const part = await edge.api.call("POST", "/transactions/otlp", body);
    expect(part.status).toBe(200);
    expect(items(part).map((i) => i.service_name)).toEqual(["proxy"]);
    expect(meta(part).partial).toBe(true);
    expect(byName(part).dead?.status).toBe("failed");
  });
});

describe("export jobs over coordinator.nodes", () => {
  const body = { session_id: "stats-1@fan", timestamp: { from: KPI_MS, to: KPI_MS + 5 * 60_000 }, format: "pcap" };
  /** Queues an export job and waits until it is done; its final status. */
  const finished = async (a: ApiAppliance) => {
    const r = await a.api.call("POST", "/exports", body);
    expect(r.status).toBe(201);
    const id = String(data(r).id);
    return await waitFor(`export ${id} done`, async () => {
      const s = data(await a.api.call("GET", `/exports/${id}`));
      return s.status === "done" || s.status === "failed" ? s : undefined;
    });
  };

  test("a job that missed a node says so in its status and its download, naming the node", async () => {
    const job = await finished(edge);
    expect(job.status).toBe("done");
    expect(job.partial).toContain("dead failed (");
    const file = await fetch(`${edge.api.base}/exports/${job.id}/download`, {
      headers: { authorization: `Bearer ${edge.api.token}` },
    });
    expect(file.status).toBe(200);
    expect(file.headers.get("x-svc-partial")).toContain("dead failed (");
    expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  test("a job every node answered is not partial", async () => {
    const job = await finished(coord);
    expect(job.status).toBe("done");
    expect(job.partial).toBeNull();
    const file = await fetch(`${coord.api.base}/exports/${job.id}/download`, {
      headers: { authorization: `Bearer ${coord.api.token}` },
    });
    expect(file.headers.get("x-svc-partial")).toBeNull();
  });
});

describe("the terminal's whole-call PCAP over coordinator.nodes", () => {
  test("a capture that misses a node warns once, naming it, as the search's partial answer does", async () => {
    const client = new CoordinatorClient(edge.a.app.coordinatorUrl!, { token: edge.api.token }, undefined, {
      insecureTls: false,
      timeoutMs: 10_000,
    });
    const o = {
      query: { proto: 1, eventType: "call", fromMs: KPI_MS, toMs: KPI_MS + 30 * 60_000 },
    } as unknown as SearchOptions;
    const notes: string[] = [];
    const rows = await fetchCallMessages(client, o, ["stats-1@fan", "stats-2@fan"], notes);
    expect(rows.length).toBe(6);
    expect(notes).toEqual([
      expect.stringContaining("warning: partial result, rows of some nodes are missing: dead failed ("),
    ]);
    const whole: string[] = [];
    await fetchCallMessages(
      new CoordinatorClient(coord.a.app.coordinatorUrl!, { token: coord.api.token }, undefined, {
        insecureTls: false,
        timeoutMs: 10_000,
      }),
      o,
      ["stats-1@fan"],
      whole,
    );
    expect(whole).toEqual([]);
  });
});

describe("one cache of the nodes' metadata checks", () => {
  test("the list search and the other reads of one view check a node once", async () => {
    // A forwarding proxy in front of node a counts the metadata checks that reach it.
    let checks = 0;
    const proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        if (url.pathname === "/api/v1/metadata/check") checks++;
        const body = req.method === "GET" ? undefined : await req.arrayBuffer();
        return await fetch(`${nodes.a.app.nodeUrl}${url.pathname}${url.search}`, {
          method: req.method,
          headers: req.headers,
          ...(body ? { body } : {}),
        });
      },
    });
    await using viaProxy = await startWithApi(`${dir.path}/proxy`, {
      ...SMALL,
      coordinator: { nodes: [{ name: "a", url: `http://127.0.0.1:${proxy.port}` }] },
    });
    try {
      const window = { from: KPI_MS, to: KPI_MS + 30 * 60_000 };
      const before = checks;
      // At once, as the dashboard asks for a list and its histogram: one check serves both.
      const [list, histogram] = await Promise.all([
        viaProxy.api.call("POST", "/transactions/search", {
          filter: { proto_type: 1, event_type: "call" },
          timestamp: window,
        }),
        viaProxy.api.call("POST", "/transactions/histogram", {
          filter: { proto_type: 1, event_type: "call" },
          timestamp: window,
          interval: "1m",
        }),
      ]);
      expect([list.status, histogram.status]).toEqual([200, 200]);
      expect(byName(list).a?.status).toBe("ok");
      expect(byName(histogram).a?.status).toBe("ok");
      expect(checks - before).toBe(1);
    } finally {
      proxy.stop(true);
    }
  });
});
