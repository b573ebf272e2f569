/**
 * ingest.line_protocol.max_columns (docs/ARCHITECTURE.md "Line-protocol types"). Found by a
 * red-team run: one point with 5000 tag keys was answered 204, and every flush of its table ran
 * out of DuckDB memory (tuning.memory_limit 1GB), retried for ever: the row never reached Parquet.
 */
import { expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { lpWrite, metricValue, startLineProtocol } from "./lineproto-helpers.ts";

const T0 = 1_700_000_000;

test("a point with more tag and field keys than max_columns is a 400 column_limit; the table's other points and other tables are written and flushed", async () => {
  await using dir = tempDir();
  await using s = await startLineProtocol(dir.path);
  const lake = s.a.app.lake!;
  const wide = `wide,${Array.from({ length: 5000 }, (_, i) => `t${i}=v`).join(",")} f=1i ${T0}`;
  const r = await lpWrite(s.lpUrl, "/write?db=cap&precision=s", `${wide}\nnarrow f=2i ${T0}`);
  expect(r.status).toBe(400);
  expect(r.body?.lines?.map((l) => [l.line, l.reason])).toEqual([[1, "column_limit"]]);
  expect(r.body?.lines?.[0]?.message).toContain("ingest.line_protocol.max_columns (250)");
  expect(lake.table("cap.wide")).toBeUndefined();
  await lake.flush();
  expect((await lake.query(`SELECT f FROM svc_lake.cap.narrow`)).rows).toEqual([{ f: 2 }]);
  const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
  expect(metricValue(metrics, "svc_lake_flush_failures_total", { table: "cap.wide", reason: "other" })).toBe(0);
});

test("the cap counts the table's columns as it grows: time + keys up to max_columns are accepted, one more is refused", async () => {
  await using dir = tempDir();
  await using s = await startLineProtocol(dir.path, { max_columns: 4 });
  const lake = s.a.app.lake!;
  expect(
    (await lpWrite(s.lpUrl, "/write?db=cap&precision=s", `m,a=x b=1i,c=2i,d=3i ${T0}`)).body?.lines?.map(
      (l) => l.reason,
    ),
  ).toEqual(["column_limit"]);
  expect((await lpWrite(s.lpUrl, "/write?db=cap&precision=s", `m,a=x b=1i ${T0}`)).status).toBe(204);
  expect((await lpWrite(s.lpUrl, "/write?db=cap&precision=s", `m c=2i ${T0 + 1}`)).status).toBe(204);
  const more = await lpWrite(s.lpUrl, "/write?db=cap&precision=s", `m d=3i ${T0 + 2}\nm,a=y b=4i ${T0 + 3}`);
  expect(more.status).toBe(400);
  expect(more.body?.lines?.map((l) => [l.line, l.reason])).toEqual([
    [1, "column_limit"],
    [2, "column_limit"],
  ]);
  expect(lake.table("cap.m")!.columns.map((c) => c.name)).toEqual(["time", "a", "b", "c"]);
  await lake.flush();
  expect((await lake.query(`SELECT a, b, c FROM svc_lake.cap.m ORDER BY time`)).rows).toEqual([
    { a: "x", b: 1, c: null },
    { a: null, b: null, c: 2 },
  ]);
});
