/**
 * `svc search --format chart` as a real process (docs/HISTOGRAM.md "`svc search --format chart`"): the chart is the coordinator's
 * histogram over the whole --from..--to range under the search filters, not the rows --limit
 * fetched. ~700 SIP messages over two hours go in as HEP over UDP; every bucket's count is checked
 * against counts made here from the send times. A coordinator without the route (an older
 * version; here a proxy in front of the real one that answers 404 for it) gets the row chart and
 * a note saying so.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { callsOverTime, expectedBuckets, type SentMessage } from "../fixtures/calls-over-time.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { cliEnv, runCli } from "./cli-harness.ts";

const PASSWORD = "cli-chart-password";
const MIN = 60_000;
const HOUR = 60 * MIN;
const TO = Date.now() - 3 * MIN;
const FROM = TO - 2 * HOUR;
const sent: SentMessage[] = callsOverTime({
  calls: 120,
  fromMs: FROM - 10 * MIN,
  spanMs: 2 * HOUR,
  seed: 11,
  tag: "cli",
});

let dir: TempDir;
let home: TempDir;
let appliance: TestAppliance;
let host = "";

const chart = (args: string[], at = host) =>
  runCli(
    [
      "search",
      "--host",
      at,
      "--user",
      "admin",
      "--pass",
      PASSWORD,
      "--from",
      new Date(FROM).toISOString(),
      "--to",
      new Date(TO).toISOString(),
      "--format",
      "chart",
      ...args,
    ],
    cliEnv(home.path),
  );

/** `label │ count bar` lines after the header (and the legend, when grouped). */
const bars = (stdout: string, skip: number) =>
  stdout
    .trimEnd()
    .split("\n")
    .slice(skip)
    .map((l) => {
      const m = /^\s*(.+?) │ +(\d+)(?: (.*))?$/.exec(l);
      if (!m) throw new Error(`not a bar line: ${JSON.stringify(l)}`);
      return { label: m[1]!, count: Number(m[2]), bar: m[3] ?? "" };
    });

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

beforeAll(async () => {
  dir = tempDir("svc-cli-chart-");
  home = tempDir("svc-cli-chart-home-");
  appliance = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  host = appliance.app.coordinatorUrl!.replace("http://", "");
  const udp = await Bun.udpSocket({});
  for (const m of sent) udp.send(m.packet, appliance.app.ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  const lake = appliance.app.lake!;
  await waitFor(
    "every message stored",
    async () => {
      await lake.sync();
      return (
        Number((await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
        sent.length
      );
    },
    20_000,
  );
}, 60_000);

afterAll(async () => {
  await appliance?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
  await home?.[Symbol.asyncDispose]();
});

describe("svc search --format chart", () => {
  test("counts every message of the range per 5-minute bucket, whatever --limit", async () => {
    const r = await chart(["--limit", "10"]);
    const want = expectedBuckets(sent, FROM, TO, 5 * MIN, () => "");
    const total = want.reduce((n, b) => n + b.count, 0);
    const count = await appliance.app.lake!.query(
      `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT)`,
      [FROM * 1000, TO * 1000],
    );
    expect(total).toBe(Number(count.rows[0]!.n));
    expect(total).toBeGreaterThan(300);
    expect(r.stdout.split("\n")[0]).toBe(
      `Events over time: ${new Date(FROM).toISOString()} → ${new Date(TO).toISOString()}, bucket 5m, ${total} events (whole range)`,
    );
    const lines = bars(r.stdout, 1);
    // Labels are UTC HH:MM (with the day when the range crosses midnight).
    expect(lines.map((l) => [l.label.slice(-5), l.count])).toEqual(want.map((b) => [hhmm(b.start_ms), b.count]));
    const max = Math.max(...want.map((b) => b.count));
    const labelWidth = Math.max(...lines.map((l) => l.label.length));
    expect(lines.find((l) => l.count === max)!.bar.length).toBe(160 - labelWidth - String(max).length - 4);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  test("--group-by method: a legend with each group's total and stacked bars; filters apply", async () => {
    const r = await chart(["--group-by", "method", "--interval", "10m", "--from-user", "1001"]);
    const mine = sent.filter((m) => m.caller === "1001");
    const want = expectedBuckets(mine, FROM, TO, 10 * MIN, (m) => m.method);
    const [header, legend] = r.stdout.split("\n");
    expect(header).toEndWith(`bucket 10m, ${want.reduce((n, b) => n + b.count, 0)} events (whole range)`);
    const totals = new Map<string, number>();
    for (const b of want) for (const [k, n] of Object.entries(b.groups)) totals.set(k, (totals.get(k) ?? 0) + n);
    const legendItems = [...legend!.matchAll(/(\S) (\S+) (\d+)/g)].map((m) => ({
      fill: m[1]!,
      key: m[2]!,
      total: Number(m[3]),
    }));
    expect(new Map(legendItems.map((i) => [i.key, i.total]))).toEqual(totals);
    const lines = bars(r.stdout, 2);
    expect(lines.map((l) => l.count)).toEqual(want.map((b) => b.count));
    // The largest bucket's bar is split in the legend's order, each group's cells in proportion.
    const biggest = want.indexOf(want.reduce((a, b) => (b.count > a.count ? b : a)));
    const bar = lines[biggest]!.bar;
    for (const item of legendItems) {
      const cells = [...bar].filter((c) => c === item.fill).length;
      expect(
        Math.abs(cells - ((want[biggest]!.groups[item.key] ?? 0) / want[biggest]!.count) * bar.length),
      ).toBeLessThanOrEqual(1);
    }
    expect(r.code).toBe(0);
  });

  test("bad --group-by / --interval: one line on stderr, exit 2; --grep charts the fetched rows and says so", async () => {
    const bad = await chart(["--interval", "1s"]);
    expect(bad.stdout).toBe("");
    const seconds = Math.ceil((TO - Math.floor(FROM / 1000) * 1000) / 1000);
    expect(bad.stderr).toBe(
      `svc: --interval 1s gives ${seconds} buckets over --from..--to, at most 2000: choose a wider interval\n`,
    );
    expect(bad.code).toBe(2);
    const group = await chart(["--group-by", "caller"]);
    expect(group.stderr).toBe('svc: --group-by "caller" is not one of none, method, status (status_class)\n');
    expect(group.code).toBe(2);
    const grep = await chart(["--grep", "INVITE", "--limit", "20"]);
    expect(grep.stderr).toContain("--grep/--exclude filter fetched rows here: the chart counts the ");
    expect(grep.stderr).toContain("(limit 20 reached), not the whole range\n");
    expect(grep.stdout.split("\n")[0]).toMatch(/, \d+ rows$/);
    expect(grep.code).toBe(0);
  });

  test("a coordinator without the histogram route: the row chart and a note naming the reason", async () => {
    const upstream = appliance.app.coordinatorUrl!;
    await using proxy = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const url = new URL(req.url);
        if (url.pathname.endsWith("/transactions/histogram"))
          return Response.json({ error: "NOT_FOUND", message: "no route" }, { status: 404 });
        return await fetch(`${upstream}${url.pathname}${url.search}`, {
          method: req.method,
          headers: req.headers,
          body: req.method === "GET" ? undefined : await req.arrayBuffer(),
        });
      },
    });
    const r = await chart(["--limit", "50"], `127.0.0.1:${proxy.port}`);
    expect(r.stderr).toBe(
      "the coordinator has no POST /transactions/histogram (an older version): the chart counts the 50 fetched rows (limit 50 reached), not the whole range\n",
    );
    expect(r.stdout.split("\n")[0]).toEndWith("bucket 5m, 50 rows");
    expect(bars(r.stdout, 1).reduce((n, l) => n + l.count, 0)).toBe(50);
    expect(r.code).toBe(0);
  });
});
