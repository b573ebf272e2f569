/**
 * OTLP log export of loadgen (docs/LOADGEN.md "OTLP logs"): every ended call is one log record
 * POSTed as OTLP/HTTP JSON to a collector endpoint (here a loopback HTTP server that keeps what
 * it gets), failures with their reason; a collector answering 500 is counted, not fatal.
 */
import { describe, expect, test } from "bun:test";
import { DEFAULT_OPTIONS, Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";

const opts = (o: Partial<LoadgenOptions>): LoadgenOptions => ({ ...DEFAULT_OPTIONS, listeners: [], ...o });

interface OtlpRecord {
  severityText: string;
  body: { stringValue: string };
  attributes: Array<{ key: string; value: { stringValue?: string } }>;
}

function collector(status = 200) {
  const records: OtlpRecord[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: OtlpRecord[] }> }> };
      for (const rl of body.resourceLogs) for (const sl of rl.scopeLogs) records.push(...sl.logRecords);
      return new Response("{}", { status, headers: { "content-type": "application/json" } });
    },
  });
  return { records, url: `http://127.0.0.1:${server.port}/v1/logs`, [Symbol.dispose]: () => void server.stop(true) };
}

const attr = (r: OtlpRecord, key: string) => r.attributes.find((a) => a.key === key)?.value.stringValue;

describe("loadgen OTLP logs", () => {
  test("one record per call with its Call-ID and result; a failed call carries its reason", async () => {
    using otlp = collector();
    const uas = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0 }), mode: "management" });
    await uas.start();
    try {
      const ok = new Engine({ opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${uas.binds[0]!.port}`, rate: 100, total_calls: 4, log_otel_endpoint: otlp.url }), mode: "load" });
      await ok.start();
      await ok.done;
      // OPTIONS to a port that never answers fails after the recv timeout.
      const silent = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
      const bad = new Engine({ opts: opts({ scenario_name: "options", remote_addr: `127.0.0.1:${silent.port}`, rate: 100, total_calls: 1, recv_timeout_ms: 50, log_otel_endpoint: otlp.url }), mode: "load" });
      await bad.start();
      await bad.done;
      silent.close();
      const calls = otlp.records.filter((r) => attr(r, "sip.call_id"));
      expect(calls.filter((r) => attr(r, "loadgen.result") === "successful")).toHaveLength(4);
      expect(new Set(calls.map((r) => attr(r, "sip.call_id"))).size).toBe(5);
      const failed = calls.filter((r) => attr(r, "loadgen.result") === "failed");
      expect(failed.map((r) => [r.severityText, r.body.stringValue, attr(r, "loadgen.reason")])).toEqual([["WARN", "call failed: recv_timeout", "recv_timeout"]]);
      expect(otlp.records.filter((r) => r.body.stringValue === "engine stopped")).toHaveLength(2);
      expect(ok.snapshot().log_export_errors).toBe(0);
    } finally {
      await uas.stop();
    }
  });

  test("a collector that refuses is counted in log_export_errors", async () => {
    using otlp = collector(500);
    const uas = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0 }), mode: "management" });
    await uas.start();
    try {
      const e = new Engine({ opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${uas.binds[0]!.port}`, rate: 100, total_calls: 2, log_otel_endpoint: otlp.url }), mode: "load" });
      await e.start();
      await e.done;
      expect(e.snapshot().calls_successful).toBe(2);
      expect(e.snapshot().log_export_errors).toBeGreaterThanOrEqual(1);
    } finally {
      await uas.stop();
    }
  });
});
