import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ColumnDef } from "../core/index.ts";
import { repageParquet } from "../core/parquet/repage.ts";
import { type FileIndex, PagedFiles } from "./page-index.ts";
import { PageHelper, splitColumns } from "./page-helper.ts";
import { PageReader } from "./page-reader.ts";

const ENTRY = new URL("./page-worker.ts", import.meta.url);

/** Paths this process has open (Linux). */
function openPaths(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

const columns: ColumnDef[] = [
  { name: "uuid", type: "varchar" },
  { name: "ts", type: "timestamp" },
  { name: "sid", type: "varchar" },
  { name: "port", type: "int32" },
  { name: "payload", type: "varchar" },
  { name: "extra", type: "varchar" },
];

/** A FileIndex whose chunks have these uncompressed sizes, in two row groups. */
function indexOf(sizes: Record<string, number>): FileIndex {
  const group = () => new Map(Object.entries(sizes).map(([name, b]) => [name, { rawBytes: b / 2 }])) as never;
  return {
    paged: true,
    groupStart: [0, 10],
    rows: 20,
    groups: [group(), group()],
    pageBlooms: new Map(),
    pageBloomDirs: new Map(),
  };
}

describe("splitColumns", () => {
  test("the widest columns while they hold less than half of the bytes", () => {
    const sizes = { uuid: 40, ts: 10, sid: 40, port: 5, payload: 500, extra: 200 };
    expect([...splitColumns(columns, indexOf(sizes))]).toEqual(["payload"]);
    // No column dominates: the widest ones up to about half.
    const even = { uuid: 100, ts: 100, sid: 100, port: 100, payload: 100, extra: 100 };
    expect(splitColumns(columns, indexOf(even)).size).toBe(3);
    // One column holding everything still leaves the others here, and one column is never split.
    expect([...splitColumns(columns, indexOf({ ...sizes, payload: 1e9 }))]).toEqual(["payload"]);
    expect(splitColumns(columns.slice(0, 1), indexOf({ uuid: 40 })).size).toBe(0);
    expect(splitColumns(columns, indexOf({})).size).toBe(0);
  });
});

describe("PageHelper", () => {
  test("columns read by the worker equal the main thread's; a file not read by page is undefined; stop closes its files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-page-helper-"));
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    const helper = new PageHelper(ENTRY, () => {});
    try {
      const src = join(dir, "duck.parquet");
      const paged = join(dir, "paged.parquet");
      await con.run(`COPY (
        SELECT uuid()::VARCHAR AS uuid, TIMESTAMP '2026-11-29 10:00:00' + INTERVAL (i * 997) MILLISECOND AS ts,
               'c' || (i // 7) AS sid, CASE WHEN i % 17 = 0 THEN NULL ELSE (5000 + i % 100)::INTEGER END AS port,
               CASE WHEN i % 9 = 0 THEN NULL ELSE 'INVITE sip:' || i || ' SIP/2.0 ☎ ' || repeat('h', i % 300) END AS payload,
               '{"n":' || i || '}' AS extra
        FROM range(30000) r(i) ORDER BY sid, ts
      ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 16384)`);
      await repageParquet(src, paged, { rowsPerPage: 500 });
      const rows = [0, 1, 499, 500, 16383, 16384, 29999, 7, 12345];
      const local = new PagedFiles();
      const here = new PageReader(local).read(paged, { columns }, rows);
      expect(here?.length).toBe(rows.length);
      const wide = columns.filter((c) => c.name === "payload" || c.name === "extra");
      const there = await helper.read(paged, wide, rows);
      expect(there).toEqual(here!.map((r) => ({ payload: r.payload, extra: r.extra })));
      expect(here!.some((r) => r.payload === null)).toBe(true);
      expect(await helper.read(join(dir, "missing.parquet"), wide, [0])).toBeUndefined();
      // The worker's descriptors are the process's: stopping it closes them.
      local.openFiles.closeAll();
      expect(openPaths().filter((p) => p === paged).length).toBe(1);
      await helper.stop();
      expect(openPaths().filter((p) => p === paged)).toEqual([]);
      expect(helper.alive).toBe(false);
    } finally {
      await helper.stop();
      con.closeSync();
      db.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a worker that cannot start is reported, and every read is left to the caller", async () => {
    const reasons: string[] = [];
    const helper = new PageHelper(new URL("./no-such-worker.ts", import.meta.url), (r) => reasons.push(r));
    const answer = await helper.read("/nowhere.parquet", columns, [0]);
    expect(answer).toBe("failed");
    expect(helper.alive).toBe(false);
    expect(reasons.length).toBe(1);
  });

  test("after stop, reads are left to the caller", async () => {
    const helper = new PageHelper(ENTRY, () => {});
    await helper.stop();
    expect(await helper.read("/nowhere.parquet", columns, [0])).toBe("failed");
  });
});
