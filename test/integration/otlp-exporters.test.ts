import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { invite } from "../fixtures/sip.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { sendAll, type Transport } from "./otlp-helpers.ts";

const PASSWORD = "otlp-test-password";
type Row = Record<string, unknown>;

async function login(api: string) {
  const r = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  expect(r.status).toBe(201);
  const token = ((await r.json()) as { token: string }).token;
  const search = async (proto: number, filter: Row, limit = 100) => {
    const now = Date.now();
    const res = await fetch(`${api}/transactions/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        filter: { proto_type: proto, event_type: "default", ...filter },
        param: { limit },
        timestamp: { from: now - 3_600_000, to: now + 60_000 },
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { items: Row[]; keys: string[] } }).data;
  };
  const related = async (callId: string) => {
    const res = await fetch(`${api}/transactions/otlp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ session_id: callId }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { items: Row[]; sessions: string[] } }).data;
  };
  return { search, related };
}

const json = (v: unknown) => JSON.parse(String(v)) as Row;

describe("OTLP receiver with the official OpenTelemetry JS exporters", () => {
  test("traces, metrics and logs over OTLP/HTTP JSON, OTLP/HTTP protobuf and OTLP/gRPC come back through SQL and search", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true } },
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { lake, otlp, coordinatorUrl } = a.app;
    const { search, related } = await login(`${coordinatorUrl}/api/v4`);
    const before = Date.now() * 1000;
    for (const transport of ["http-json", "http-proto", "grpc"] as Transport[]) {
      const sent = await sendAll(transport, otlp!.httpUrl()!, otlp!.grpcAddress()!);
      await lake!.sync();
      const q = async (sql: string) => (await lake!.query(sql, [sent.service])).rows;

      // Traces: both spans, parent link, kind, status, duration, attributes as JSON.
      const spans = await q(
        `SELECT *, epoch_us(timestamp) AS ts_us, epoch_us(end_timestamp) AS end_us FROM svc_lake.main.otlp_traces WHERE service_name = $1 ORDER BY name`,
      );
      expect(spans.map((s) => s.name)).toEqual(["INVITE", "route lookup"]);
      const [root, child] = spans as [Row, Row];
      expect(root).toMatchObject({
        trace_id: sent.traceId,
        span_id: sent.rootSpanId,
        parent_span_id: null,
        kind: 2,
        status_code: 0,
        scope_name: "svc-test-scope",
      });
      expect(child).toMatchObject({
        trace_id: sent.traceId,
        span_id: sent.childSpanId,
        parent_span_id: sent.rootSpanId,
        kind: 3,
        status_code: 2,
        status_message: "no route",
      });
      expect(json(root.span_attrs)).toEqual({
        "sip.call_id": sent.callId,
        "sip.method": "INVITE",
        "net.peer.port": 5060,
      });
      expect(json(root.resource_attrs)).toMatchObject({
        "service.name": sent.service,
        "deployment.environment": "test",
      });
      expect(Number(root.ts_us)).toBeGreaterThanOrEqual(before - 1000);
      expect(Number(root.duration_ns)).toBeGreaterThanOrEqual(0);
      expect(Math.floor(Number(root.duration_ns) / 1000)).toBeLessThanOrEqual(Number(root.end_us) - Number(root.ts_us));
      expect(json(root.raw)).toMatchObject({ traceId: sent.traceId, spanId: sent.rootSpanId, name: "INVITE" });
      expect(String(root.date)).toBe(new Date(Number(root.ts_us) / 1000).toISOString().slice(0, 10));

      // Metrics: one row per data point; Sum as an integer, Gauge as a double, Histogram sum and count.
      const metrics = await q(`SELECT * FROM svc_lake.main.otlp_metrics WHERE service_name = $1 ORDER BY name`);
      expect(
        metrics.map((m) => [m.name, m.type, m.value_double, m.value_int === null ? null : Number(m.value_int), m.unit]),
      ).toEqual([
        ["rtp.mos", "Gauge", 42.5, null, ""],
        ["sip.calls", "Sum", null, 5, "{call}"],
        ["sip.pdd", "Histogram", 900, 3, "ms"],
      ]);
      expect(metrics[1]).toMatchObject({ description: "calls seen", scope_name: "svc-test-meter" });
      expect(json(metrics[1]!.attributes)).toEqual({ trunk: "a" });
      expect(json(metrics[2]!.raw)).toMatchObject({
        bucketCounts: expect.arrayContaining([]),
        aggregationTemporality: 2,
      });

      // Logs: a text body with trace context, a structured body as JSON.
      const logs = await q(
        `SELECT * FROM svc_lake.main.otlp_logs WHERE service_name = $1 ORDER BY severity_number DESC`,
      );
      expect(logs.length).toBe(2);
      expect(logs[0]).toMatchObject({
        severity_number: 17,
        severity_text: "ERROR",
        body: `call ${sent.callId} failed: 503`,
        body_json: null,
        trace_id: sent.traceId,
        span_id: sent.rootSpanId,
      });
      expect(json(logs[0]!.attributes)).toEqual({ "sip.call_id": sent.callId });
      expect(logs[1]).toMatchObject({ severity_number: 9, trace_id: null, span_id: null });
      expect(json(logs[1]!.body_json)).toEqual({ event: "registered", expires: 3600 });

      // Search: proto 200-202 with the OTLP filters.
      const byTrace = await search(200, { trace_id: sent.traceId.toUpperCase() });
      expect(byTrace.items.map((i) => i.name).sort()).toEqual(["INVITE", "route lookup"]);
      // A row that carries a SIP Call-ID names it (the results grid opens that call from it).
      expect(Object.fromEntries(byTrace.items.map((i) => [i.name, i.sip_call_id]))).toEqual({
        INVITE: sent.callId,
        "route lookup": null,
      });
      expect(byTrace.keys).toEqual(
        expect.arrayContaining([
          "timestamp",
          "end_timestamp",
          "duration_ns",
          "trace_id",
          "span_id",
          "parent_span_id",
          "kind",
          "status_code",
          "status_message",
          "service_name",
          "scope_name",
          "resource_attrs",
          "span_attrs",
          "raw",
        ]),
      );
      expect((await search(200, { service_name: sent.service, status_code: 2 })).items.map((i) => i.span_id)).toEqual([
        sent.childSpanId,
      ]);
      expect((await search(200, { sip_call_id: sent.callId })).items.map((i) => i.span_id)).toEqual([sent.rootSpanId]);
      expect(
        (await search(201, { service_name: sent.service, types: ["Sum", "Histogram"] })).items
          .map((i) => i.name)
          .sort(),
      ).toEqual(["sip.calls", "sip.pdd"]);
      expect(
        (await search(201, { service_name: sent.service, name: "rtp.%" })).items.map((i) => i.value_double),
      ).toEqual([42.5]);
      const logHits = await search(202, { trace_id: sent.traceId });
      expect(logHits.items.map((i) => i.body)).toEqual([`call ${sent.callId} failed: 503`]);
      expect((await search(202, { service_name: sent.service, sip_call_id: sent.callId })).items.length).toBe(1);

      // The call view: the SIP call with that Call-ID lists the span and the log record that carry it.
      const udp = await Bun.udpSocket({});
      udp.send(
        encodeHep3({
          srcIp: "10.0.0.1",
          dstIp: "10.0.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: Date.now() * 1000,
          protoType: 1,
          captureId: 7,
          payload: invite({ callId: sent.callId, from: "1001", to: "2002", fromTag: "f" }),
        }),
        a.app.ingest!.listeners.udp!.port(),
        "127.0.0.1",
      );
      udp.close();
      await waitFor("the INVITE stored", async () => {
        await lake!.sync();
        return (
          Number(
            (
              await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1", [
                sent.callId,
              ])
            ).rows[0]!.n,
          ) === 1
        );
      });
      const rel = await related(sent.callId);
      expect(rel.items.map((i) => [i.kind, i.text, i.trace_id, i.sip_call_id, i.service_name])).toEqual([
        ["span", "INVITE", sent.traceId, sent.callId, sent.service],
        ["log", `call ${sent.callId} failed: 503`, sent.traceId, sent.callId, sent.service],
      ]);
      expect(rel.items[0]!.attributes).toMatchObject({ "sip.method": "INVITE" });
    }
    // Every transport counted under its own label.
    await waitFor("counters", async () => {
      const text = await (await fetch(`${coordinatorUrl}/metrics`)).text();
      return (
        ["http", "grpc"].every((t) =>
          text.includes(`svc_otlp_requests_total{transport="${t}",signal="logs",outcome="ok"}`),
        ) && /svc_otlp_items_ingested_total\{signal="traces"\} 6\b/.test(text)
      );
    });
  }, 120_000);
});

peerTest(
  "/metrics with the OTLP counters passes promtool check metrics",
  [PEERS.promtool],
  async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true } } });
    await sendAll("grpc", a.app.otlp!.httpUrl()!, a.app.otlp!.grpcAddress()!);
    expect(
      (
        await fetch(`${a.app.otlp!.httpUrl()}/v1/logs`, {
          method: "POST",
          body: "{",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(400);
    const body = await (await fetch(`${a.app.coordinatorUrl}/metrics`)).text();
    expect(body).toContain('svc_otlp_requests_total{transport="http",signal="logs",outcome="bad_request"} 1');
    expect(body).toContain('svc_otlp_items_ingested_total{signal="metrics"} 3');
    const proc = Bun.spawn(["promtool", "check", "metrics"], {
      stdin: new Blob([body]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const output = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
    expect(output).toBe("");
    expect(await proc.exited).toBe(0);
  },
  60_000,
);
