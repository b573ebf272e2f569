/**
 * A line-protocol point whose row would not fit one spool line (SPOOL_MAX_LINE_BYTES, DuckDB's
 * read_csv max_line_size) is refused with 400 instead of answered 204 and lost. Found by a red-team
 * run: one point with a 7 MB string (under max_body_bytes) got 204, its spool file could not be read
 * back, was moved to spool/failed and the row counted as lost (unreadable_spool), with every other
 * row of that spool file.
 */
import { expect, test } from "bun:test";
import { SPOOL_MAX_LINE_BYTES } from "../../src/core/index.ts";
import { tempDir } from "../harness.ts";
import { lpWrite, metricValue, startLineProtocol } from "./lineproto-helpers.ts";

const T0 = 1_700_000_000;

test("a point larger than a spool line is a 400 naming the line; the points beside it are stored in Parquet, nothing is lost", async () => {
  await using dir = tempDir();
  await using s = await startLineProtocol(dir.path);
  const lake = s.a.app.lake!;
  const big = "x".repeat(SPOOL_MAX_LINE_BYTES + 10);
  const near = "y".repeat(SPOOL_MAX_LINE_BYTES - 1000);
  const body = [
    `m,host=a s="small" ${T0}`,
    `m,host=b s="${big}" ${T0 + 1}`,
    `m,host=c s="${near}" ${T0 + 2}`,
    `m,host=d s="after" ${T0 + 3}`,
  ].join("\n");
  const r = await lpWrite(s.lpUrl, "/write?db=big&precision=s", body);
  expect(r.status).toBe(400);
  expect(r.body?.lines?.map((l) => [l.line, l.reason])).toEqual([[2, "point_too_large"]]);
  expect(r.body?.lines?.[0]?.message).toContain(`${SPOOL_MAX_LINE_BYTES} bytes`);
  await lake.flush();
  const q = await lake.query(`SELECT host, length(s) AS len FROM svc_lake.big.m ORDER BY host`);
  expect(q.rows).toEqual([
    { host: "a", len: 5 },
    { host: "c", len: near.length },
    { host: "d", len: 5 },
  ]);
  // Flushed to Parquet, nothing lost or parked in spool/failed.
  const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
  expect(metricValue(metrics, "svc_lake_rows_lost_total", { reason: "unreadable_spool" })).toBe(0);
  expect(metricValue(metrics, "svc_lake_data_files", { table: "big.m" })).toBeGreaterThan(0);
});

test("structured HEP table mode: a payload larger than a spool line is a 400 for that point", async () => {
  await using dir = tempDir();
  await using s = await startLineProtocol(dir.path, { allow_hep_sip_call: true });
  const lake = s.a.app.lake!;
  const big = "z".repeat(SPOOL_MAX_LINE_BYTES + 10);
  const body = [
    `hep_proto_1_call session_id="lp-size-ok" ${T0}`,
    `hep_proto_1_call session_id="lp-size-big",payload="${big}" ${T0 + 1}`,
  ].join("\n");
  const r = await lpWrite(s.lpUrl, "/write?precision=s", body);
  expect(r.status).toBe(400);
  expect(r.body?.lines?.map((l) => [l.line, l.reason])).toEqual([[2, "point_too_large"]]);
  await lake.flush();
  const q = await lake.query(`SELECT session_id FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'lp-size-%'`);
  expect(q.rows).toEqual([{ session_id: "lp-size-ok" }]);
  const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
  expect(metricValue(metrics, "svc_lake_rows_lost_total", { reason: "unreadable_spool" })).toBe(0);
});
