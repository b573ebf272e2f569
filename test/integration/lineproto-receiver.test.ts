/**
 * The line-protocol receiver over real HTTP (docs/LINE-PROTOCOL.md "Receiver", "Table and column rules",
 * "Errors"): probes, methods, db/bucket/prefix naming, gzip, the body cap, precision, bad lines,
 * type mismatches, columns added on the fly and the points read back through SQL and the search
 * API with proto 300, plus the metrics on the coordinator's /metrics.
 */
import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { tempDir, waitFor } from "../harness.ts";
import { lpWrite, metricValue, startLineProtocol, tableRows } from "./lineproto-helpers.ts";

const T0 = 1_700_000_000; // 2023-11-14T22:13:20Z

describe("line-protocol receiver", () => {
  test("probes, methods and unknown paths", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const base = s.lpUrl;
    const ping = await fetch(`${base}/ping`);
    expect(ping.status).toBe(204);
    expect(ping.headers.get("x-tsdb-version")).toBeTruthy();
    expect((await fetch(`${base}/ping`, { method: "HEAD" })).status).toBe(204);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "pass", name: "svc" });
    const getWrite = await fetch(`${base}/write?db=x`);
    expect(getWrite.status).toBe(405);
    expect(getWrite.headers.get("allow")).toBe("POST");
    expect(((await getWrite.json()) as { error: string }).error).toContain("POST");
    expect((await fetch(`${base}/api/v2/write`, { method: "PUT", body: "m v=1" })).status).toBe(405);
    expect((await fetch(`${base}/ping`, { method: "POST" })).status).toBe(405);
    const unknown = await fetch(`${base}/query?q=select`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toHaveProperty("error");
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "ping", outcome: "ok" })).toBe(2);
    expect(metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "health", outcome: "ok" })).toBe(1);
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v1_write", outcome: "method_not_allowed" }),
    ).toBe(1);
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v2_write", outcome: "method_not_allowed" }),
    ).toBe(1);
  });

  test("db, bucket, default_db and table_prefix name the schema and table; org and rp are ignored", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path, { default_db: "fall back", table_prefix: "lp_" });
    const lake = s.a.app.lake!;
    const line = (v: number) => `cpu\\ load,host=h v=${v} ${T0}`;
    expect((await lpWrite(s.lpUrl, "/write?db=Tele-graf&rp=autogen&precision=s", line(1))).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/api/v2/write?bucket=b2&org=acme&precision=s", line(2))).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/api/v3/write_lp?db=v3db&precision=s", line(3))).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?precision=s", line(4))).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?db=9lives&precision=s", `1m v=5 ${T0}`)).status).toBe(204);
    const keys = lake
      .tables()
      .filter((d) => d.columns[0]?.name === "time")
      .map((d) => `${d.schema}.${d.name}`)
      .sort();
    expect(keys).toEqual([
      "Tele_graf.lp_cpu_load",
      "_9lives.lp__1m",
      "b2.lp_cpu_load",
      "fall_back.lp_cpu_load",
      "v3db.lp_cpu_load",
    ]);
    expect(await tableRows(lake, "b2", "lp_cpu_load")).toEqual([{ time_us: T0 * 1_000_000, host: "h", v: 2 }]);
    expect(await tableRows(lake, "fall_back", "lp_cpu_load")).toEqual([{ time_us: T0 * 1_000_000, host: "h", v: 4 }]);
    // Rule 7: with the mode off and an empty prefix hep_proto_* is refused; with a prefix it is an ordinary table.
    expect((await lpWrite(s.lpUrl, "/write?db=x&precision=s", `hep_proto_1_call v=1 ${T0}`)).status).toBe(204);
    expect(lake.table("x.lp_hep_proto_1_call")).toBeDefined();
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(metricValue(metrics, "svc_lp_points_ingested_total", { database: "b2" })).toBe(1);
  });

  test("gzip bodies, the body cap (also after inflating), encodings", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path, { max_body_bytes: 4096 });
    const lake = s.a.app.lake!;
    const lines = Array.from({ length: 50 }, (_, i) => `gz,host=h${i % 3} v=${i}i ${T0 + i}`).join("\n");
    const gz = await lpWrite(s.lpUrl, "/write?db=z&precision=s", gzipSync(lines), { "content-encoding": "gzip" });
    expect(gz.status).toBe(204);
    expect((await tableRows(lake, "z", "gz")).map((r) => r.v)).toEqual(Array.from({ length: 50 }, (_, i) => i));

    const big = "m v=1\n".repeat(1000); // 6000 bytes
    const tooBig = await lpWrite(s.lpUrl, "/write?db=z", big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body?.error).toContain("4096");
    const bomb = await lpWrite(s.lpUrl, "/write?db=z", gzipSync(big), { "content-encoding": "gzip" });
    expect(bomb.status).toBe(413);
    const chunked = await fetch(`${s.lpUrl}/write?db=z`, {
      method: "POST",
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode("m v=1\n".repeat(100)));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await lpWrite(s.lpUrl, "/write?db=z", "not gzip at all", { "content-encoding": "gzip" })).status).toBe(400);
    expect((await lpWrite(s.lpUrl, "/write?db=z", "m v=1", { "content-encoding": "br" })).status).toBe(400);
    expect(lake.table("z.m")).toBeUndefined();
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v1_write", outcome: "body_too_large" }),
    ).toBe(3);
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v1_write", outcome: "bad_request" }),
    ).toBe(2);
  });

  test("precision: s, ms, us, ns (sub-µs digits cut), the configured default, invalid values", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path, { default_precision: "ms" });
    const lake = s.a.app.lake!;
    const us = T0 * 1_000_000;
    expect((await lpWrite(s.lpUrl, "/write?db=p&precision=s", `s v=1 ${T0}`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?db=p&precision=ms", `ms v=1 ${T0}123`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/api/v2/write?bucket=p&precision=us", `us v=1 ${T0}123456`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?db=p&precision=ns", `ns v=1 ${T0}123456789`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?db=p", `dflt v=1 ${T0}250`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?db=p&precision=ns", `neg v=1 -1500`)).status).toBe(204);
    const time = async (t: string) => (await tableRows(lake, "p", t))[0]!.time_us;
    expect(await time("s")).toBe(us);
    expect(await time("ms")).toBe(us + 123_000);
    expect(await time("us")).toBe(us + 123_456);
    expect(await time("ns")).toBe(us + 123_456);
    expect(await time("dflt")).toBe(us + 250_000);
    expect(await time("neg")).toBe(-2); // rounded down, not towards zero
    const bad = await lpWrite(s.lpUrl, "/write?db=p&precision=h", `x v=1 1`);
    expect(bad.status).toBe(400);
    expect(bad.body?.error).toContain("precision");
    // A point without a timestamp gets the receive time, at the request's precision.
    const before = Date.now();
    expect((await lpWrite(s.lpUrl, "/write?db=p&precision=s", `now v=1`)).status).toBe(204);
    const t = Number(await time("now"));
    expect(t % 1_000_000).toBe(0);
    expect(t).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1_000_000);
    expect(t).toBeLessThanOrEqual(Date.now() * 1000);
  });

  test("a full lake buffer: the whole request is refused with 503 and Retry-After, nothing half-written", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(
      dir.path,
      {},
      { storage: { lakehouse: { max_buffered_rows: 1000, flush_interval_sec: 3600, batch_size: 100000 } } },
    );
    const lake = s.a.app.lake!;
    const body = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => `bp v=${from + i}i ${T0 + from + i}`).join("\n");
    expect((await lpWrite(s.lpUrl, "/write?db=bp&precision=s", body(900, 0))).status).toBe(204);
    const full = await lpWrite(s.lpUrl, "/api/v2/write?bucket=bp&precision=s", body(200, 900));
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("1");
    expect(full.body).toMatchObject({ written: 0 });
    expect((await tableRows(lake, "bp", "bp")).length).toBe(900);
    await lake.flush(); // the buffer drains into Parquet; the retry gets in
    expect((await lpWrite(s.lpUrl, "/api/v2/write?bucket=bp&precision=s", body(200, 900))).status).toBe(204);
    expect((await tableRows(lake, "bp", "bp")).length).toBe(1100);
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(metricValue(metrics, "svc_lp_write_errors_total", { stage: "insert" })).toBe(200);
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v2_write", outcome: "server_error" }),
    ).toBe(1);
  });

  test("a body with bad lines: good lines written, 400 lists the bad ones; zero points → 400", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    const body = [
      `m,host=a v=1 ${T0}`,
      `m v=`,
      `# comment`,
      `m,host=b v=3 ${T0 + 1}`,
      `m,host=c v=bad`,
      ``,
      `m,host=d v=5,time=9i,u=18446744073709551615u,w=1u ${T0 + 2}`,
    ].join("\n");
    const r = await lpWrite(s.lpUrl, "/write?db=pb&precision=s", body);
    expect(r.status).toBe(400);
    expect(r.body?.written).toBe(3);
    expect(r.body?.lines?.map((l) => [l.line, l.key ?? null, l.reason])).toEqual([
      [2, null, "bad_field_value"],
      [5, null, "bad_field_value"],
    ]);
    expect(r.body?.error).toMatch(/^partial write: 3 point\(s\) written/);
    expect(await tableRows(lake, "pb", "m")).toEqual([
      { time_us: T0 * 1_000_000, host: "a", v: 1, u: null, w: null },
      { time_us: (T0 + 1) * 1_000_000, host: "b", v: 3, u: null, w: null },
      // time=9i is a value of another type for the timestamp column (rule 6, dropped and counted).
      { time_us: (T0 + 2) * 1_000_000, host: "d", v: 5, u: "18446744073709551615", w: 1 },
    ]);
    expect(lake.table("pb.m")!.columns.map((c) => c.name)).toEqual(["time", "host", "v", "u", "w"]);
    for (const empty of ["", "# only a comment\n\n"]) {
      const e = await lpWrite(s.lpUrl, "/write?db=pb", empty);
      expect(e.status).toBe(400);
      expect(e.body?.error).toContain("no points");
    }
    const long = await lpWrite(s.lpUrl, "/write?db=pb", `${"x".repeat(256)} v=1\nm v=9 ${T0}`);
    expect(long.status).toBe(400);
    expect(long.body?.lines?.map((l) => [l.line, l.reason])).toEqual([[1, "name_too_long"]]);
    expect((await lpWrite(s.lpUrl, `/write?db=${"d".repeat(256)}`, "m v=1")).status).toBe(400);
    const allBad = await lpWrite(s.lpUrl, "/write?db=pb", "m\nm,t=1");
    expect(allBad.status).toBe(400);
    expect(allBad.body?.lines?.map((l) => l.line)).toEqual([1, 2]);
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(metricValue(metrics, "svc_lp_write_errors_total", { stage: "parse" })).toBe(4);
    expect(
      metricValue(metrics, "svc_lp_requests_received_total", { endpoint: "v1_write", outcome: "parse_error" }),
    ).toBe(2);
  });

  test("type mismatches are dropped per value and counted; names fold case like the catalog", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    const body = [
      `tc v=1i ${T0}`,
      `tc v="x",w=2i ${T0 + 1}`,
      `TC,v=tag w=3i ${T0 + 2}`,
      `tc v=1.5 ${T0 + 3}`,
      `tc,Host=a W=4i,s="\\\\N" ${T0 + 4}`,
    ].join("\n");
    const r = await lpWrite(s.lpUrl, "/write?db=tm&precision=s", body);
    expect(r.status).toBe(204);
    expect(lake.table("tm.tc")!.columns.map((c) => `${c.name}:${c.type}`)).toEqual([
      "time:timestamp",
      "v:int64",
      "w:int64",
      "Host:varchar",
      "s:varchar",
    ]);
    expect(await tableRows(lake, "tm", "tc")).toEqual([
      { time_us: T0 * 1_000_000, v: 1, w: null, Host: null, s: null },
      { time_us: (T0 + 1) * 1_000_000, v: null, w: 2, Host: null, s: null },
      { time_us: (T0 + 2) * 1_000_000, v: null, w: 3, Host: null, s: null },
      { time_us: (T0 + 4) * 1_000_000, v: null, w: 4, Host: "a", s: "\\N" },
    ]);
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    // v="x", the tag v=tag (column is BIGINT), v=1.5 (a point left without fields is not written)
    expect(metricValue(metrics, "svc_lp_write_errors_total", { stage: "type_mismatch" })).toBe(3);
    expect(metricValue(metrics, "svc_lp_points_ingested_total", { database: "tm" })).toBe(4);
  });

  test("columns added on the fly: a new catalog snapshot; points found through SQL and the search API (proto 300)", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    const now = Date.now();
    const ns = (msAgo: number) => `${BigInt(now - msAgo) * 1_000_000n}`;
    expect((await lpWrite(s.lpUrl, "/write?db=grow", `cpu,host=a usage=1.5 ${ns(3000)}`)).status).toBe(204);
    const snapBefore = await lake.snapshotId();
    expect(
      (
        await lpWrite(
          s.lpUrl,
          "/api/v2/write?bucket=grow&org=o",
          `cpu,host=b,dc=eu usage=2.5,cores=8i,ok=true,note="needle in it" ${ns(2000)}`,
        )
      ).status,
    ).toBe(204);
    expect(await lake.snapshotId()).toBeGreaterThan(snapBefore);
    expect(lake.table("grow.cpu")!.columns.map((c) => c.name)).toEqual([
      "time",
      "host",
      "usage",
      "dc",
      "cores",
      "ok",
      "note",
    ]);
    // Searchable right after the 204 (the lake makes rows queryable within its seal interval).
    const sql = await waitFor(
      "rows through POST /query",
      async () => {
        const r = await s.api.call("POST", "/query", {
          sql: `SELECT host, usage, dc, cores, ok, note FROM svc_lake.grow.cpu ORDER BY time`,
        });
        const rows = (r.json?.data as { rows?: unknown[] } | undefined)?.rows;
        return rows?.length === 2 ? rows : undefined;
      },
      5_000,
      10,
    );
    expect(sql).toEqual([
      { host: "a", usage: 1.5, dc: null, cores: null, ok: null, note: null },
      { host: "b", usage: 2.5, dc: "eu", cores: 8, ok: true, note: "needle in it" },
    ]);
    const search = async (filter: Record<string, unknown>) => {
      const r = await s.api.call("POST", "/transactions/search", {
        filter: { proto_type: 300, event_type: "grow__cpu", ...filter },
        param: { limit: 10 },
        timestamp: { from: now - 60_000, to: now },
      });
      expect(r.status).toBe(200);
      return (r.json!.data!.items ?? []) as Array<Record<string, unknown>>;
    };
    const all = await search({});
    expect(all.map((i) => i.host)).toEqual(["b", "a"]); // time descending
    expect(all[0]).toMatchObject({
      host: "b",
      cores: 8,
      ok: true,
      storage_volume: "grow.cpu",
      time_us: (now - 2000) * 1000,
    });
    expect((await search({ payload: "needle", call_id: "ignored", method: "INVITE" })).map((i) => i.host)).toEqual([
      "b",
    ]);
    expect(await search({ payload: "no such text" })).toEqual([]);
    // `__` inside a table name: the event type still finds it (the regex split alone would not).
    expect((await lpWrite(s.lpUrl, "/write?db=grow", `disk__io,dev=sda reads=7i ${ns(1000)}`)).status).toBe(204);
    await lake.sync();
    expect((await search({ event_type: "grow__disk__io" })).map((i) => [i.dev, i.reads])).toEqual([["sda", 7]]);
    expect((await search({ event_type: "GROW__DISK__IO" })).length).toBe(1);
  });
});
