/**
 * coordinator.query.max_result_bytes for nested values (docs/ARCHITECTURE.md "Query path"), found
 * by a red-team run: `SELECT range(0, 1000000000)` through `POST /query` was converted element by
 * element into a JS array before the JSON budget saw it (RSS 23 GB, the appliance OOM-killed). A
 * chunk is now refused from a floor of its JSON read from DuckDB's vectors (string lengths, list
 * and array sizes, struct members) before any value is converted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, type TempDir } from "../harness.ts";

const PASSWORD = "nested-budget-password";
const MAX_RESULT_BYTES = 1 << 20;

let dir: TempDir;
let a: TestAppliance;
let token = "";

async function sql(text: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${a.app.coordinatorUrl}/api/v4/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ sql: text }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  dir = tempDir();
  // A generous time-out: DuckDB builds a 1.5 M-element list in about a second on a loaded 2 vCPU VM.
  a = await startTestAppliance(dir.path, {
    coordinator: {
      auth: { admin_password_hash: sha256Hex(PASSWORD) },
      query_timeout_sec: 60,
      query: { max_result_bytes: MAX_RESULT_BYTES },
    },
  });
  const res = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  token = String(((await res.json()) as { token: string }).token);
});

afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

/** Growth of the peak RSS (VmHWM, reset through clear_refs) while the query runs: the appliance is in this process. */
async function peakGrowth(q: string) {
  Bun.gc(true);
  writeFileSync("/proc/self/clear_refs", "5");
  const before = process.memoryUsage().rss;
  const r = await sql(q);
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
  return { r, grew: peak - before };
}

test("a list, map or struct over the budget is a 413 before any element becomes a JS value", async () => {
  // DuckDB's own share is ≈ 130 MB once its allocator has served the same list (the control query,
  // one boolean to convert); converting the 1.5 M elements to JS values added ≈ 200 MB on top.
  for (const q of [
    "SELECT range(0, 1500000) AS big",
    "SELECT {'a': 1, 'b': [range(0, 1500000)]} AS big",
    "SELECT map_from_entries([(1, range(0, 1500000))]) AS big",
  ]) {
    const control = await peakGrowth(`SELECT big IS NULL AS n FROM (${q})`);
    expect(control.r.status).toBe(200);
    const { r, grew } = await peakGrowth(q);
    expect({ q, status: r.status, body: r.body }).toMatchObject({
      q,
      status: 413,
      body: { error: "PAYLOAD_TOO_LARGE", reason: "max_result_bytes", rows_read: 1 },
    });
    expect({ q, underQuarterGiB: grew < 256 * 2 ** 20, peakGrowthMiB: grew >> 20 }).toMatchObject({
      q,
      underQuarterGiB: true,
    });
  }
  // Strings inside a list count with their length.
  const strings = await sql("SELECT [repeat('z', 600000), repeat('z', 600000)] AS big");
  expect(strings).toMatchObject({ status: 413, body: { error: "PAYLOAD_TOO_LARGE", rows_read: 1 } });
});

test("nested values under the budget are answered whole and exact", async () => {
  const fits = await sql(
    "SELECT range(0, 3) AS l, [[1, 2], NULL, []] AS ll, {'a': 'x', 'b': [1]} AS s, map([1], ['v']) AS m, [1, 2]::INTEGER[2] AS arr, NULL::INTEGER[] AS n, [repeat('y', 1000)] AS strs",
  );
  expect(fits.status).toBe(200);
  expect((fits.body.data as { rows: unknown[] }).rows).toEqual([
    {
      l: ["0", "1", "2"],
      ll: [[1, 2], null, []],
      s: { a: "x", b: [1] },
      m: [{ key: 1, value: "v" }],
      arr: [1, 2],
      n: null,
      strs: ["y".repeat(1000)],
    },
  ]);
});
