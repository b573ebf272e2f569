import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { callsOverTime, expectedBuckets, type SentMessage } from "../fixtures/calls-over-time.ts";
import { tempDir, waitFor } from "../harness.ts";

/**
 * docs/HISTOGRAM.md: `POST /transactions/histogram` counts every row of the window under the search
 * filter, per bucket and group, exactly — checked against counts made here from the send times of
 * ~1000 SIP messages sent as HEP over UDP (part flushed to Parquet, part still in the buffer), and
 * against a COUNT(*) in the lake; many more rows than one search page.
 */
const PASSWORD = "histogram-test-password";
const MIN = 60_000;
const HOUR = 60 * MIN;
const NOW = Date.now();
const SPAN_FROM = NOW - 3 * HOUR;
/** A message exactly on a 10-minute boundary, the end of one window below. */
const EDGE_MS = Math.floor((NOW - 30 * MIN) / (10 * MIN)) * 10 * MIN;

type Body = Record<string, unknown>;
interface Answer {
  status: number;
  json: {
    data: {
      window: { from_ms: number; to_ms: number };
      interval: string;
      interval_ms: number;
      group_by: string;
      total: number;
      groups: Array<{ key: string; total: number }>;
      buckets: Array<{ start_ms: number; count: number; groups: Record<string, number> }>;
      table: string | null;
    };
    error?: string;
    message?: string;
  };
}

describe("events over time", () => {
  test("histogram over the whole window: exact per bucket and group, filters, interval, offset, bad input", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      storage: { lakehouse: { flush_interval_sec: 3600 } },
      ingest: { line_protocol: { enable: true } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const udp = await Bun.udpSocket({});
    const port = ingest!.listeners.udp!.port();
    const sent: SentMessage[] = [];
    const send = async (batch: SentMessage[]) => {
      for (const m of batch) udp.send(m.packet, port, "127.0.0.1");
      sent.push(...batch);
      await waitFor("every message stored", async () => {
        await lake!.sync();
        return (
          Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
          sent.length
        );
      });
    };
    // Two batches flushed to Parquet, the third left in the buffer; a few calls before the windows.
    await send(callsOverTime({ calls: 60, fromMs: SPAN_FROM, spanMs: 3 * HOUR, seed: 1, tag: "a" }));
    await lake!.flush();
    await send(callsOverTime({ calls: 60, fromMs: SPAN_FROM, spanMs: 3 * HOUR, seed: 2, tag: "b" }));
    await send(callsOverTime({ calls: 10, fromMs: SPAN_FROM - 6 * HOUR, spanMs: HOUR, seed: 3, tag: "old" }));
    await lake!.flush();
    await send([
      ...callsOverTime({ calls: 60, fromMs: SPAN_FROM, spanMs: 3 * HOUR, seed: 4, tag: "c" }),
      ...callsOverTime({ calls: 1, fromMs: EDGE_MS, spanMs: 1, seed: 5, tag: "edge" }),
    ]);
    udp.close();
    expect((await lake!.files("main.hep_proto_1_call")).length).toBeGreaterThanOrEqual(2);
    expect(
      Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.mem_hep_proto_1_call")).rows[0]!.n),
    ).toBeGreaterThan(0);

    const api = `${coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const post = async (path: string, body: Body): Promise<Answer> => {
      const r = await fetch(`${api}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Answer["json"] };
    };
    const histogram = (filter: Body, from: number, to: number, extra: Body = {}) =>
      post("/transactions/histogram", {
        filter: { proto_type: 1, event_type: "call", ...filter },
        timestamp: { from, to },
        ...extra,
      });
    const lakeCount = async (from: number, to: number, where = "true", params: unknown[] = []) =>
      Number(
        (
          await lake!.query(
            `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND ${where}`,
            [from * 1000, to * 1000, ...(params as string[])],
          )
        ).rows[0]!.n,
      );

    // "Last 3 hours" (not aligned to a bucket): 5-minute buckets, by method.
    const from = NOW - 3 * HOUR;
    const to = NOW;
    const byMethod = await histogram({}, from, to, { group_by: "method" });
    expect(byMethod.status).toBe(200);
    const d = byMethod.json.data;
    expect([d.interval, d.interval_ms, d.group_by, d.table]).toEqual([
      "5m",
      5 * MIN,
      "method",
      "main.hep_proto_1_call",
    ]);
    expect(d.window).toEqual({ from_ms: from, to_ms: to });
    const want = expectedBuckets(sent, from, to, 5 * MIN, (m) => m.method);
    expect(d.buckets.length).toBe(37);
    expect(d.buckets).toEqual(want);
    const inWindow = sent.filter((m) => m.us >= from * 1000 && m.us <= to * 1000).length;
    expect(d.total).toBe(inWindow);
    expect(d.total).toBe(await lakeCount(from, to));
    // More rows than a search page (whose default and dashboard limits are 100 and 200), and spread over the range.
    expect(d.total).toBeGreaterThan(500);
    expect(d.buckets.filter((b) => b.count > 0).length).toBeGreaterThan(25);
    const page = await post("/transactions/search", {
      filter: { proto_type: 1, event_type: "call" },
      param: { limit: 200 },
      timestamp: { from, to },
    });
    expect((page.json.data as unknown as { items: unknown[] }).items.length).toBe(200);
    // Groups in display order: requests (largest first), then response classes.
    const methodTotals = new Map<string, number>();
    for (const m of sent)
      if (m.us >= from * 1000 && m.us <= to * 1000) methodTotals.set(m.method, (methodTotals.get(m.method) ?? 0) + 1);
    const requests = ["INVITE", "ACK", "BYE"].sort(
      (x, y) => methodTotals.get(y)! - methodTotals.get(x)! || x.localeCompare(y),
    );
    expect(d.groups).toEqual(
      [...requests, "1xx", "2xx", "4xx", "5xx"].map((key) => ({ key, total: methodTotals.get(key)! })),
    );

    // By response class, and ungrouped (no groups at all); same bucket counts.
    const byClass = await histogram({}, from, to, { group_by: "status_class" });
    expect(byClass.json.data.buckets).toEqual(expectedBuckets(sent, from, to, 5 * MIN, (m) => m.statusClass));
    expect(byClass.json.data.groups.map((g) => g.key)).toEqual(["request", "1xx", "2xx", "4xx", "5xx"]);
    const plain = await histogram({}, from, to);
    expect(plain.json.data.buckets).toEqual(expectedBuckets(sent, from, to, 5 * MIN, () => ""));
    expect(plain.json.data.groups).toEqual([]);

    // Filters of the search body apply: a caller; a method list; one Call-ID (file pruning by session_id).
    const caller = await histogram({ from_user: "1002" }, from, to, { group_by: "method" });
    const callerSent = sent.filter((m) => m.caller === "1002");
    expect(caller.json.data.buckets).toEqual(expectedBuckets(callerSent, from, to, 5 * MIN, (m) => m.method));
    expect(caller.json.data.total).toBe(await lakeCount(from, to, "caller = $3", ["1002"]));
    const methods = await histogram({ methods: ["BYE", "ACK"] }, from, to, { group_by: "method" });
    expect(methods.json.data.buckets).toEqual(
      expectedBuckets(
        sent.filter((m) => m.method === "BYE" || m.method === "ACK"),
        from,
        to,
        5 * MIN,
        (m) => m.method,
      ),
    );
    const oneCall = sent.find((m) => m.callId.startsWith("b-"))!.callId;
    const call = await histogram({ call_id: oneCall }, from, to, { group_by: "status_class" });
    expect(call.json.data.buckets).toEqual(
      expectedBuckets(
        sent.filter((m) => m.callId === oneCall),
        from,
        to,
        5 * MIN,
        (m) => m.statusClass,
      ),
    );
    expect(call.json.data.total).toBeGreaterThan(0);

    // A window ending on a bucket boundary with a message exactly at its end; explicit intervals; an offset.
    expect(sent.filter((m) => m.us === EDGE_MS * 1000).map((m) => m.callId)).toEqual(["edge-0@hist.test"]);
    const edgeTo = EDGE_MS;
    const aligned = await histogram({}, edgeTo - HOUR, edgeTo, { interval: "10m" });
    expect(aligned.json.data.buckets.length).toBe(6);
    expect(aligned.json.data.buckets).toEqual(expectedBuckets(sent, edgeTo - HOUR, edgeTo, 10 * MIN, () => ""));
    const wide = await histogram({}, from - 12 * HOUR, to, { interval: " 1h ", utc_offset_min: 330 });
    expect(wide.json.data.interval).toBe("1h");
    expect(wide.json.data.buckets[0]!.start_ms % HOUR).toBe(30 * MIN);
    expect(wide.json.data.buckets).toEqual(expectedBuckets(sent, from - 12 * HOUR, to, HOUR, () => "", 330 * MIN));
    expect(wide.json.data.total).toBe(sent.filter((m) => m.us <= to * 1000).length);
    // The whole day: 30-minute buckets chosen from the range.
    const day = await histogram({}, to - 24 * HOUR, to, { group_by: "method" });
    expect([day.json.data.interval, day.json.data.buckets.length]).toEqual(["30m", 49]);
    expect(day.json.data.buckets).toEqual(expectedBuckets(sent, to - 24 * HOUR, to, 30 * MIN, (m) => m.method));

    // A table with no rows yet: every bucket zero; the full search body (param) is accepted.
    const empty = await post("/transactions/histogram", {
      filter: { proto_type: 1, event_type: "registration" },
      param: { limit: 10 },
      timestamp: { from, to },
    });
    expect(empty.status).toBe(200);
    expect(empty.json.data.total).toBe(0);
    expect(empty.json.data.buckets.length).toBe(37);
    expect(empty.json.data.buckets.every((b) => b.count === 0)).toBe(true);

    // Bad input: 400 naming the member, never a 500.
    const bad: Array<[Body, RegExp]> = [
      [{ group_by: "caller" }, /^group_by: expected one of none, method, status_class$/],
      [{ interval: "7x" }, /^interval: "7x" is not a width such as 30s/],
      [{ interval: "0m" }, /^interval: "0m" is not a width/],
      [{ interval: 60 }, /^interval: expected text/],
      [{ interval: "1s" }, /^interval: 1s over this range gives 10801 buckets, at most 2000/],
      [{ interval: "400d" }, /^interval: "400d" is wider than 366d$/],
      [{ utc_offset_min: 2000 }, /^utc_offset_min: /],
      [{ timestamp: { from: to, to: from } }, /^timestamp.from is after timestamp.to$/],
      [{ filter: { proto_type: 1, event_type: "nope" } }, /^event_type "nope" is not call, registration or default$/],
    ];
    for (const [extra, message] of bad) {
      const r = await post("/transactions/histogram", {
        filter: { proto_type: 1, event_type: "call" },
        timestamp: { from, to },
        ...extra,
      });
      expect({ extra, status: r.status }).toEqual({ extra, status: 400 });
      expect(r.json.message).toMatch(message);
    }
    // group_by on a table without SIP columns (a line-protocol table): 400; without grouping it counts.
    const lp = await fetch(`${a.app.lineProtocol!.url()}/write?db=metrics&precision=ms`, {
      method: "POST",
      body: `cpu,host=a usage=1 ${NOW - MIN}\ncpu,host=b usage=2 ${NOW - 2 * MIN}\n`,
    });
    expect(lp.status).toBeLessThan(300);
    await waitFor("the line-protocol rows", async () => {
      await lake!.sync();
      return (
        lake!.tables().some((t) => t.name === "cpu") &&
        Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.metrics.cpu")).rows[0]!.n) === 2
      );
    });
    const lpGrouped = await post("/transactions/histogram", {
      filter: { proto_type: 300, event_type: "metrics__cpu" },
      timestamp: { from, to },
      group_by: "method",
    });
    expect(lpGrouped.status).toBe(400);
    expect(lpGrouped.json.message).toMatch(
      /^group_by method: table metrics\.cpu has no SIP method or response code; use group_by none$/,
    );
    const lpPlain = await post("/transactions/histogram", {
      filter: { proto_type: 300, event_type: "metrics__cpu" },
      timestamp: { from, to },
    });
    expect([lpPlain.status, lpPlain.json.data.total, lpPlain.json.data.table]).toEqual([200, 2, "metrics.cpu"]);
  }, 120_000);
});
