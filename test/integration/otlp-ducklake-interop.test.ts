/**
 * The OTLP tables in the DuckLake catalog (docs/OTLP.md "Columns"): after the official exporters sent traces,
 * metrics and logs and the lake flushed them to Parquet, a stock DuckDB 1.5.5 with the ducklake
 * extension (test/peers/ducklake_queries.py, scripts/python-peers.sh) attaches the catalog
 * read-only and returns the same rows and column types as our engine.
 */
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, pyPeersPython, tempDir } from "../harness.ts";
import { sendAll } from "./otlp-helpers.ts";

const PEER_SCRIPT = resolve(import.meta.dir, "../peers/ducklake_queries.py");
type Row = Record<string, unknown>;

const QUERIES = {
  traces:
    "SELECT trace_id, span_id, parent_span_id, name, kind, status_code, status_message, service_name, duration_ns::VARCHAR AS d, epoch_us(timestamp)::VARCHAR AS ts, date::VARCHAR AS day, span_attrs FROM {L}.main.otlp_traces ORDER BY span_id",
  metrics:
    "SELECT name, type, value_double, value_int::VARCHAR AS vi, unit, service_name, attributes FROM {L}.main.otlp_metrics ORDER BY name",
  logs: "SELECT severity_number, severity_text, body, body_json, trace_id, span_id, service_name, epoch_us(timestamp)::VARCHAR AS ts FROM {L}.main.otlp_logs ORDER BY severity_number",
  types:
    "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_catalog = '{L}' AND table_name LIKE 'otlp_%' ORDER BY table_name, ordinal_position",
};

peerTest(
  "a stock DuckDB with the ducklake extension reads the OTLP tables: same rows and types",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-otlp-interop-");
    const catalogPath = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake") + "/";
    const ours: Record<string, Row[]> = {};
    {
      await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true } } });
      await sendAll("http-proto", a.app.otlp!.httpUrl()!, a.app.otlp!.grpcAddress()!);
      await a.app.lake!.sync();
      await a.app.lake!.flush();
      for (const [name, sql] of Object.entries(QUERIES))
        ours[name] = (await a.app.lake!.query(sql.replaceAll("{L}", "svc_lake"))).rows;
    }
    expect(ours.traces!.length).toBe(2);
    expect(ours.metrics!.length).toBe(3);
    expect(ours.logs!.length).toBe(2);
    const p = Bun.spawnSync(
      [
        pyPeersPython(),
        PEER_SCRIPT,
        catalogPath,
        dataPath,
        "ro",
        JSON.stringify(Object.fromEntries(Object.entries(QUERIES).map(([k, v]) => [k, v.replaceAll("{L}", "l")]))),
      ],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    if (!p.success) throw new Error(`ducklake_queries.py failed (${p.exitCode}): ${p.stderr.toString()}`);
    const peer = JSON.parse(p.stdout.toString()) as Record<string, Row[]>;
    for (const name of ["traces", "metrics", "logs"])
      expect({ name, rows: peer[name] }).toEqual({ name, rows: ours[name] });
    // Column names and order are the spec's plus date; the peer sees the catalog's types.
    const cols = (t: string) =>
      peer.types!.filter((r) => r.table_name === t).map((r) => `${r.column_name}:${r.data_type}`);
    expect(cols("otlp_logs")).toEqual([
      "timestamp:TIMESTAMP",
      "observed_timestamp:TIMESTAMP",
      "severity_number:INTEGER",
      "severity_text:VARCHAR",
      "body:VARCHAR",
      "body_json:VARCHAR",
      "trace_id:VARCHAR",
      "span_id:VARCHAR",
      "service_name:VARCHAR",
      "attributes:VARCHAR",
      "raw:VARCHAR",
      "date:DATE",
    ]);
    expect(cols("otlp_traces")).toContain("duration_ns:BIGINT");
    expect(cols("otlp_metrics")).toContain("value_double:DOUBLE");
  },
  120_000,
);
