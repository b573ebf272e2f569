/**
 * Server errors must not leak internals (docs/ARCHITECTURE.md "Errors and request ids"): one error handler decides what leaves the process. A
 * real QUERY_FAILED (a search over a Parquet file deleted behind the catalog's back) answers with
 * generic text and a request id; the executed SQL and the file list are only in the log, under
 * the same id. 4xx keep their helpful message and details; every answer carries X-Request-Id.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { configureLogging } from "../../src/core/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { startWithApi } from "./export-helpers.ts";

let logs: string[] = [];
beforeEach(() => {
  logs = [];
  configureLogging({ level: "error", format: "json", sink: { write: (l) => logs.push(l) } });
});
afterEach(() =>
  configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } }),
);

const parquetFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".parquet"))
    .map((e) => join(e.parentPath, e.name));

describe("error answers", () => {
  test("a 5xx (QUERY_FAILED over a deleted Parquet file) has no SQL or path, and a request id that is in the log", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const { ingest, lake } = s.a.app;
    const now = Date.now();
    const udp = await Bun.udpSocket({});
    for (let i = 0; i < 3; i++) {
      const payload = invite({ callId: `leak-${i}`, from: "1001", to: "2002" });
      udp.send(
        encodeHep3({
          srcIp: "10.0.0.1",
          dstIp: "10.0.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: (now - 60_000 + i) * 1000,
          protoType: 1,
          payload,
        }),
        ingest!.listeners.udp!.port(),
        "127.0.0.1",
      );
    }
    udp.close();
    await waitFor("rows ingested", async () => {
      await lake!.sync();
      return (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n === 3;
    });
    await lake!.flush();
    const files = parquetFiles(join(dir.path, "lake"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) rmSync(f);

    const r = await s.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: "call" },
      param: { limit: 10 },
      timestamp: { from: now - 3_600_000, to: now },
    });
    expect(r.status).toBe(500);
    const body = r.json as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["error", "message", "request_id"]);
    expect(body.error).toBe("QUERY_FAILED");
    for (const secret of [dir.path, ".parquet", "SELECT", "read_parquet", "svc_lake"])
      expect(r.text).not.toContain(secret);
    const requestId = String(body.request_id);
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get("x-request-id")).toBe(requestId);
    // The log has the whole error under that id: the SQL and the missing file.
    const logged = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.request_id === requestId);
    expect(logged).toBeDefined();
    expect(logged!.msg).toBe("request failed");
    expect(logged!.code).toBe("QUERY_FAILED");
    expect(JSON.stringify(logged)).toContain(".parquet");
    expect((logged!.details as { sql?: string }).sql).toContain("SELECT");
  }, 60_000);

  test("4xx keep message and details; every answer (200, 404, node app) carries X-Request-Id; a sane incoming id is kept; a wrong method is a 405", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const bad = await s.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1 },
      param: { limit: "many" },
      timestamp: { from: 0, to: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json?.error).toBe("VALIDATION");
    expect(bad.json?.message).toContain("limit");
    expect((bad.json as { fields?: string[] }).fields).toEqual(["param.limit"]);
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const ok = await fetch(`${s.a.app.coordinatorUrl}/health`, { headers: { "x-request-id": "proxy-42.a:b_c" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toBe("proxy-42.a:b_c");
    // An id with anything but letters, digits and . _ : - (or too long) is replaced, never echoed.
    for (const evil of ["a b", "<script>", "z".repeat(129)]) {
      const r = await fetch(`${s.a.app.coordinatorUrl}/health`, { headers: { "x-request-id": evil } });
      expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
    const missing = await fetch(`${s.a.app.coordinatorUrl}/api/v4/no-such-route`);
    expect(missing.status).toBe(401); // the guard answers before routing
    expect(missing.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // A nested member declared as an object must be one too (Elysia turned [null, null] into {}).
    const nested = await s.api.call("POST", "/transactions/search", { filter: {}, param: {}, timestamp: [null, null] });
    expect(nested.status).toBe(400);
    expect(nested.json?.message).toBe("timestamp: must be a JSON object, not an array");
    const node = await fetch(`${s.a.app.nodeUrl}/api/v1/hep`, { method: "POST", body: new Uint8Array([1, 2, 3]) });
    expect(node.status).toBe(400);
    expect(node.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    // A path that exists for other methods is a 405 naming them (schemathesis: "undeclared method"); an unknown one a 404.
    const wrongMethod = await s.api.call("DELETE", "/transactions/search");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expect(wrongMethod.json?.error).toBe("METHOD_NOT_ALLOWED");
    const withParam = await s.api.call("POST", "/tokens/some-id");
    expect(withParam.status).toBe(405);
    expect(withParam.headers.get("allow")).toBe("DELETE, GET, PATCH");
    expect((await s.api.call("GET", "/no-such-route")).status).toBe(404);
    // A static route wins over a parameter route: /aliases/resolve is GET only, not /aliases/:aliasId's methods.
    const resolve = await s.api.call("POST", "/aliases/resolve");
    expect(resolve.status).toBe(405);
    expect(resolve.headers.get("allow")).toBe("GET");
    const nodeWrong = await fetch(`${s.a.app.nodeUrl}/api/v1/metadata/stats`, { method: "PUT" });
    expect(nodeWrong.status).toBe(405);
    expect(nodeWrong.headers.get("allow")).toBe("GET");
  }, 60_000);
});
