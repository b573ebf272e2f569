/**
 * Real clients write unchanged (docs/LINE-PROTOCOL.md "Receiver"): the official npm client
 * `@influxdata/influxdb-client` (v2 API, gzip forced), the Debian `influx` v1 shell (INSERT and
 * -import), and HTTPS with client certificates made by openssl for this test.
 */
import { describe, expect, test } from "bun:test";
import { HttpError, InfluxDB, Point, setLogger } from "@influxdata/influxdb-client";
import { join } from "node:path";
import { onPath, peerTest, tempDir, type Peer } from "../harness.ts";
import { makePki } from "../peers/tls.ts";
import { startLineProtocol, tableRows } from "./lineproto-helpers.ts";

const INFLUX: Peer = { install: "apt-get install influxdb-client", probe: onPath("influx") };
const OPENSSL: Peer = { install: "apt-get install openssl", probe: onPath("openssl") };
const T0 = 1_700_000_000;

/** A forwarding proxy that records each request's Content-Encoding (to prove the client gzipped). */
function encodingSpy(target: string) {
  const encodings: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      encodings.push(req.headers.get("content-encoding") ?? "");
      const body = await req.arrayBuffer();
      const headers = new Headers(req.headers);
      headers.delete("host");
      const r = await fetch(`${target}${u.pathname}${u.search}`, {
        method: req.method,
        headers,
        body,
        decompress: false,
      } as RequestInit);
      return new Response(await r.arrayBuffer(), { status: r.status, headers: r.headers });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, encodings, [Symbol.dispose]: () => void server.stop(true) };
}

// The client logs every failed write to the console; the assertions below look at the errors instead.
setLogger({ error: () => {}, warn: () => {} });

describe("line-protocol clients", () => {
  test("@influxdata/influxdb-client (v2 write API, gzip): points land typed; a bad line is a 400 the client does not retry", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    using spy = encodingSpy(s.lpUrl);
    const influx = new InfluxDB({ url: spy.url, token: "tokens-are-ignored" });
    const write = influx.getWriteApi("acme", "npm_bucket", "ms", {
      gzipThreshold: 0,
      batchSize: 1000,
      flushInterval: 0,
      maxRetries: 0,
    });
    for (let i = 0; i < 20; i++) {
      write.writePoint(
        new Point("sensor")
          .tag("room", `r${i % 2}`)
          .floatField("temp", 20 + i / 4)
          .intField("count", i)
          .uintField("big", 2 ** 40 + i)
          .booleanField("ok", i % 3 === 0)
          .stringField("note", `say "hi", \\ ${i}`)
          .timestamp(new Date(T0 * 1000 + i)),
      );
    }
    await write.flush();
    expect(spy.encodings).toEqual(["gzip"]);
    const rows = await tableRows(lake, "npm_bucket", "sensor");
    expect(rows.length).toBe(20);
    expect(rows[5]).toEqual({
      time_us: T0 * 1_000_000 + 5000,
      room: "r1",
      temp: 21.25,
      count: 5,
      big: 2 ** 40 + 5,
      ok: false,
      note: `say "hi", \\ 5`,
    });
    expect(lake.table("npm_bucket.sensor")!.columns.map((c) => `${c.name}:${c.type}`)).toEqual([
      "time:timestamp",
      "room:varchar",
      "big:int64",
      "count:int64",
      "note:varchar",
      "ok:boolean",
      "temp:float64",
    ]);

    write.writeRecords([
      `sensor,room=r9 temp=1 ${T0 * 1000 + 100}`,
      `sensor,room=r9 temp= ${T0 * 1000 + 101}`,
      `sensor,room=r9 temp=3 ${T0 * 1000 + 102}`,
    ]);
    const err = await write.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HttpError);
    const h = err as HttpError;
    expect(h.statusCode).toBe(400);
    expect(h.canRetry()).toBe(false);
    expect(JSON.parse(h.body ?? "{}")).toMatchObject({ written: 2, lines: [{ line: 2, reason: "bad_field_value" }] });
    expect((await tableRows(lake, "npm_bucket", "sensor")).filter((r) => r.room === "r9").map((r) => r.temp)).toEqual([
      1, 3,
    ]);
    await write.close().catch(() => undefined);
  });

  peerTest("influx v1 shell: INSERT, -import with precision, and the error of a bad line", [INFLUX], async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    const port = new URL(s.lpUrl).port;
    const influx = async (...args: string[]) => {
      const p = Bun.spawn(["influx", "-host", "127.0.0.1", "-port", port, ...args], {
        stdout: "pipe",
        stderr: "pipe",
        stdin: "ignore",
      });
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      return { code: await p.exited, out: out + err };
    };
    const insert = await influx(
      "-database",
      "v1db",
      "-precision",
      "s",
      "-execute",
      `INSERT cpu,host=a,region=eu usage=0.5,cores=4i ${T0}`,
    );
    expect(insert.out).toBe("");
    expect(insert.code).toBe(0);
    const file = join(dir.path, "import.lp");
    await Bun.write(
      file,
      [
        "# DDL",
        "CREATE DATABASE ignored",
        "# DML",
        "# CONTEXT-DATABASE: v1import",
        `mem,host=a used=10i ${T0}`,
        `mem,host=b used=20i ${T0 + 1}`,
      ].join("\n") + "\n",
    );
    const imp = await influx("-import", "-path", file, "-precision", "s");
    expect(imp.out).toContain("Processed 2 inserts");
    expect(imp.out).toContain("Failed 0 inserts");
    const bad = await influx("-database", "v1db", "-execute", "INSERT cpu usage=");
    expect(bad.out).toStartWith("ERR: ");
    expect(bad.out).toContain(`no point could be parsed, 1 problem(s): line 1:12: missing value for field \\"usage\\"`);
    expect(await tableRows(lake, "v1db", "cpu")).toEqual([
      { time_us: T0 * 1_000_000, host: "a", region: "eu", usage: 0.5, cores: 4 },
    ]);
    expect((await tableRows(lake, "v1import", "mem")).map((r) => [r.host, r.used])).toEqual([
      ["a", 10],
      ["b", 20],
    ]);
  });

  peerTest(
    "HTTPS with client certificates: a CA-signed client writes, no or a foreign certificate is refused",
    [OPENSSL],
    async () => {
      await using dir = tempDir();
      const pki = makePki(dir.path);
      await using s = await startLineProtocol(dir.path, { cert: pki.serverCrt, key: pki.serverKey, cacert: pki.caCrt });
      expect(s.lpUrl).toStartWith("https://");
      const tls = (client?: { cert: string; key: string }) => ({
        ca: Bun.file(pki.caCrt),
        ...(client ? { cert: Bun.file(client.cert), key: Bun.file(client.key) } : {}),
      });
      const post = (body: string, client?: { cert: string; key: string }) =>
        fetch(`${s.lpUrl}/write?db=tls&precision=s`, { method: "POST", body, tls: tls(client) } as RequestInit).then(
          (r) => r.status,
          (e: unknown) => `refused: ${(e as Error).message}`,
        );
      expect(await post(`m v=1 ${T0}`, { cert: pki.clientCrt, key: pki.clientKey })).toBe(204);
      expect(String(await post(`m v=2 ${T0 + 1}`))).toStartWith("refused");
      expect(String(await post(`m v=3 ${T0 + 2}`, { cert: pki.rogueCrt, key: pki.rogueKey }))).toStartWith("refused");
      // The npm client over node's https with the same material.
      const influx = new InfluxDB({
        url: s.lpUrl,
        transportOptions: {
          ca: await Bun.file(pki.caCrt).text(),
          cert: await Bun.file(pki.clientCrt).text(),
          key: await Bun.file(pki.clientKey).text(),
        },
      });
      const w = influx.getWriteApi("o", "tls", "s", { maxRetries: 0 });
      w.writeRecord(`m v=4 ${T0 + 3}`);
      await w.close();
      expect((await tableRows(s.a.app.lake!, "tls", "m")).map((r) => r.v)).toEqual([1, 4]);
    },
  );

  peerTest("HTTPS without client certificates; the influx shell connects with -ssl", [OPENSSL, INFLUX], async () => {
    await using dir = tempDir();
    const pki = makePki(dir.path);
    await using s = await startLineProtocol(dir.path, { cert: pki.serverCrt, key: pki.serverKey });
    const r = await fetch(`${s.lpUrl}/write?db=tls2&precision=s`, {
      method: "POST",
      body: `m v=1 ${T0}`,
      tls: { ca: Bun.file(pki.caCrt) },
    } as RequestInit);
    expect(r.status).toBe(204);
    expect(
      await fetch(`${s.lpUrl.replace("https:", "http:")}/ping`).then(
        (x) => x.status,
        () => "refused",
      ),
    ).toBe("refused");
    const p = Bun.spawn(
      [
        "influx",
        "-ssl",
        "-unsafeSsl",
        "-host",
        "127.0.0.1",
        "-port",
        new URL(s.lpUrl).port,
        "-database",
        "tls2",
        "-precision",
        "s",
        "-execute",
        `INSERT m v=2 ${T0 + 1}`,
      ],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(await new Response(p.stderr).text()).toBe("");
    expect(await p.exited).toBe(0);
    expect((await tableRows(s.a.app.lake!, "tls2", "m")).map((r) => r.v)).toEqual([1, 2]);
  });
});
