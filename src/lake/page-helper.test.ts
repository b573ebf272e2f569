import { describe, expect, test } from "bun:test";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { duckScratch } from "../../test/harness.ts";
import type { ColumnDef } from "../core/index.ts";
import { repageParquet } from "../core/parquet/repage.ts";
import { type Chunk, type FileIndex, PagedFiles } from "./page-index.ts";
import { PageHelper, splitColumns } from "./page-helper.ts";
import { PageMatcher } from "./page-match.ts";
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

/** A FileIndex whose first row group's chunks have these uncompressed bytes and page counts. */
function indexOf(chunks: Record<string, [number, number]>): { index: FileIndex; pages: (c: Chunk) => number } {
  const group = new Map(Object.entries(chunks).map(([name, [b, pages]]) => [name, { rawBytes: b, pages }]));
  const index = {
    paged: true,
    groupStart: [0],
    rows: 10,
    groups: [group],
    pageBlooms: new Map(),
    pageBloomDirs: new Map(),
  } as unknown as FileIndex;
  return { index, pages: (c: Chunk) => (c as unknown as { pages: number }).pages };
}

describe("splitColumns", () => {
  test("the costliest columns by a page each (fixed cost plus bytes) while they cost less than half", () => {
    const sip = indexOf({
      uuid: [40_000, 2],
      ts: [16_000, 2],
      sid: [40_000, 2],
      port: [8_000, 1],
      payload: [2_600_000, 10],
      extra: [1_200_000, 10],
    });
    // payload 280 000 of 548 000 (pages: 20 000 fixed + bytes) is over half already alone.
    expect([...splitColumns(columns, sip.index, sip.pages)]).toEqual(["payload"]);
    // Many narrow columns: the worker takes the wide ones and some narrow ones too.
    const many: ColumnDef[] = [
      ...columns,
      ...Array.from({ length: 14 }, (_, i) => ({ name: `n${i}`, type: "varchar" as const })),
    ];
    const narrow = Object.fromEntries(many.map((c) => [c.name, [20_000, 1] as [number, number]]));
    const wide = indexOf({ ...narrow, payload: [2_600_000, 10], extra: [1_200_000, 10] });
    const picked = splitColumns(many, wide.index, wide.pages);
    expect(picked.has("payload") && picked.has("extra")).toBe(true);
    expect(picked.size).toBe(6);
    // Equal columns: half of them; one column is never split, nor a file without chunks.
    const even = indexOf(Object.fromEntries(columns.map((c) => [c.name, [10_000, 1] as [number, number]])));
    expect(splitColumns(columns, even.index, even.pages).size).toBe(3);
    expect(splitColumns(columns.slice(0, 1), sip.index, sip.pages).size).toBe(0);
    const none = indexOf({});
    expect(splitColumns(columns, none.index, none.pages).size).toBe(0);
  });
});

describe("PageHelper", () => {
  test("columns read by the worker equal the main thread's; a file not read by page is undefined; stop closes its files", async () => {
    await using scratch = await duckScratch("svc-page-helper-");
    const { con, path: dir } = scratch;
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
    }
  });

  test("the worker's lookup matches equal the main thread's, file by file; advice leaves it running", async () => {
    await using scratch = await duckScratch("svc-page-helper-match-");
    const { con, path: dir } = scratch;
    const helper = new PageHelper(ENTRY, () => {});
    try {
      // Three paged files of one table, with the lookups' filters, as compaction writes them.
      const files: string[] = [];
      for (const k of [0, 1, 2]) {
        const src = join(dir, `duck${k}.parquet`);
        const paged = join(dir, `paged${k}.parquet`);
        await con.run(`COPY (
          SELECT 'c' || (i // 7) || '-${k}' AS sid,
                 CASE WHEN i % 13 = 0 THEN NULL ELSE 'u' || ((i * ${k + 3}) % 400) END AS caller,
                 'x' || (i % 40) AS callee, 'INVITE ' || repeat('p', i % 90) AS payload
          FROM range(${20000 + k * 5000}) r(i) ORDER BY sid
        ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 8192)`);
        await repageParquet(src, paged, {
          rowsPerPage: 500,
          minPageBytes: 512,
          bloomColumns: new Set(["caller", "callee"]),
        });
        files.push(paged);
      }
      const share = [...files, join(dir, "gone.parquet")].map((path) => ({ path, groups: [0, 1, 2] }));
      const matcher = new PageMatcher(new PagedFiles());
      const cases = [
        [{ columns: ["caller"], values: ["u20"] }],
        [
          { columns: ["caller"], values: ["u7", "u399"] },
          { columns: ["callee"], values: ["x7", "x19"] },
        ],
        [{ columns: ["caller", "callee"], values: ["nobody"] }],
      ];
      for (const lookups of cases) {
        helper.adviseMatch(share, lookups);
        const there = await helper.matchMany(share, lookups, 100_000);
        const here = share.map((f) => matcher.match(f.path, lookups, f.groups, 100_000));
        expect(there).toEqual(here);
        // The missing file is refused on both threads.
        expect(here[3]).toEqual({ refused: true });
      }
      // u20 is found in every file.
      const u20 = await helper.matchMany(share.slice(0, 3), cases[0]!, 100_000);
      expect(u20 !== "failed" && u20.every((m) => "rows" in m && m.rows.length > 2)).toBe(true);
      // The limit applies per file, as on this thread.
      const few = await helper.matchMany(share.slice(0, 1), cases[0]!, 2);
      expect(few).toEqual([matcher.match(files[0]!, cases[0]!, [0, 1, 2], 2)]);
      expect(few).toEqual([{ tooMany: true }]);
      await helper.stop();
      expect(await helper.matchMany(share, cases[0]!, 10)).toBe("failed");
    } finally {
      await helper.stop();
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
