import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "./engine.ts";
import { BloomIndex } from "./bloom-index.ts";
import { bitsetMayHold, bloomHash } from "./bloom-probe.ts";
import { repageParquet } from "../core/index.ts";

/**
 * The point-lookup pruning reads the bloom filters DuckDB's COPY writes: our hash and block check
 * must say "absent" exactly where DuckDB's own probe (parquet_bloom_probe) does, or a file that
 * holds a match would be dropped.
 */
describe("BloomIndex", () => {
  let dir: string;
  let engine: Engine;
  const files: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-bloom-"));
    engine = await Engine.open({
      threads: 1,
      memoryLimit: "256MB",
      tempDirectory: join(dir, "tmp"),
      allowedDirectories: [dir],
    });
    // Three files of interleaved ids, 8 rows each (every file's min/max spans the others'; DuckDB
    // writes a bloom filter only for a dictionary-encoded chunk, i.e. repeated values), 4 row
    // groups per file; one non-ASCII id; `note` is plain-encoded (all distinct): no bloom filter.
    for (let f = 0; f < 3; f++) {
      const path = join(dir, `f${f}.parquet`);
      files.push(path);
      await engine.run(
        `COPY (SELECT 'id-' || lpad((k * 3 + ${f})::VARCHAR, 6, '0') || CASE WHEN k = 7 AND ${f} = 1 THEN '-é✓' ELSE '' END AS sid, 'u' || ((k * 3 + ${f}) % 500) AS caller, repeat(md5(i::VARCHAR), 20) || i AS note FROM (SELECT i, i // 8 AS k FROM range(8000) t(i)) ORDER BY sid) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
      );
    }
  });
  afterAll(() => {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the hash and the block check agree with DuckDB's parquet_bloom_probe", async () => {
    const index = new BloomIndex(async (sql) => (await engine.query(sql)).rows);
    const values = [
      "id-000000",
      "id-000001",
      "id-000022",
      "id-000007-é✓",
      "id-000021-é✓",
      "id-999999",
      "id-0100",
      "nope",
      "",
    ];
    for (const v of values) {
      for (const path of files) {
        const probe = await engine.query(
          `SELECT count(*) FILTER (WHERE NOT bloom_filter_excludes) AS kept FROM parquet_bloom_probe('${path}', 'sid', $1)`,
          [v],
        );
        const duck = Number(probe.rows[0]!.kept) > 0;
        // Our verdict with min/max switched off: the bloom filters alone.
        const meta = await engine.query(
          `SELECT bloom_filter_offset AS o, bloom_filter_length AS l FROM parquet_metadata('${path}') WHERE path_in_schema = 'sid' ORDER BY row_group_id`,
        );
        const bytes = new Uint8Array(await Bun.file(path).arrayBuffer());
        expect(meta.rows.every((r) => Number(r.o) > 0)).toBe(true);
        const ours = meta.rows.some((r) => {
          const l = Number(r.l);
          const size = 2 ** Math.floor(Math.log2(l));
          const end = Number(r.o) + l;
          return bitsetMayHold(bytes.subarray(end - size, end), bloomHash(v));
        });
        expect({ v, path, ours }).toEqual({ v, path, ours: duck });
      }
      // And the index as a whole keeps every file that holds the value.
      const kept = await index.prune(
        files.map((absolutePath) => ({ absolutePath })),
        [{ columns: ["sid"], values: [v] }],
      );
      for (const path of files) {
        const holds =
          Number(
            (await engine.query(`SELECT count(*) AS n FROM read_parquet('${path}') WHERE sid = $1`, [v])).rows[0]!.n,
          ) > 0;
        if (holds) expect(kept.map((k) => k.absolutePath)).toContain(path);
      }
    }
  });

  test("drops the files that cannot hold a value, keeps those it cannot rule out", async () => {
    const index = new BloomIndex(async (sql) => (await engine.query(sql)).rows);
    const all = files.map((absolutePath) => ({ absolutePath }));
    const only = async (...lookups: Array<[string[], string[]]>) =>
      (
        await index.prune(
          all,
          lookups.map(([columns, values]) => ({ columns, values })),
        )
      ).map((f) => files.indexOf(f.absolutePath));
    expect(await only([["sid"], ["id-000004"]])).toEqual([1]); // 4 = 1 * 3 + 1
    expect(await only([["sid"], ["id-000004", "id-000009"]])).toEqual([0, 1]);
    expect(await only([["sid"], ["id-000022-none"]])).toEqual([]);
    expect(await only([["sid"], ["id-000007-é✓"]])).toEqual([]); // f1's non-ASCII id is id-000022-é✓
    expect(await only([["sid"], ["id-000022-é✓"]])).toEqual([1]);
    // Several columns: a row matches when one of them holds the value.
    expect(await only([["caller", "sid"], ["id-000004"]])).toEqual([1]);
    // Lookups are AND-ed: u4 is in every file (4, 504 = 3 * 168, 1004 = 3 * 334 + 2), the id in f1 only.
    expect(await only([["caller"], ["u4"]])).toEqual([0, 1, 2]);
    expect(await only([["caller"], ["u4"]], [["sid"], ["id-000004"]])).toEqual([1]);
    // f2 holds both u4 (id-001004) and id-000005 (whose caller is u5), in different row groups: no
    // row group may hold a row with both, so the file goes.
    expect(await only([["caller"], ["u4"]], [["sid"], ["id-000005"]])).toEqual([]);
    expect(await only([["caller"], ["u5"]], [["sid"], ["id-000005"]])).toEqual([2]);
    // A column without bloom filters (plain encoding, or none written) is pruned by min/max only.
    const blooms = await engine.query(
      `SELECT count(bloom_filter_offset) AS n FROM parquet_metadata('${files[0]}') WHERE path_in_schema = 'note'`,
    );
    expect(Number(blooms.rows[0]!.n)).toBe(0);
    expect(await only([["note"], ["8"]])).toEqual([0, 1, 2]);
    // An unknown column and an unreadable file are kept.
    expect(await only([["no_such_column"], ["x"]])).toEqual([0, 1, 2]);
    const gone = await index.prune(
      [{ absolutePath: join(dir, "gone.parquet") }, all[0]!],
      [{ columns: ["sid"], values: ["id-000004"] }],
    );
    expect(gone.map((g) => g.absolutePath)).toEqual([join(dir, "gone.parquet")]);
    expect(index.stats.filesDropped).toBeGreaterThan(0);
  });

  test("caches smaller than the lake: the same answers (bitsets read again), or more files kept (footers not indexed)", async () => {
    const full = new BloomIndex(async (sql) => (await engine.query(sql)).rows);
    const noBitsets = new BloomIndex(async (sql) => (await engine.query(sql)).rows, 1);
    const oneFile = new BloomIndex(async (sql) => (await engine.query(sql)).rows, 64 * 1024, 1);
    const all = files.map((absolutePath) => ({ absolutePath }));
    for (let round = 0; round < 2; round++)
      for (const v of ["id-000004", "id-000009", "id-000022-é✓", "id-000500", "nope", "u4"]) {
        const lookups = [{ columns: ["sid", "caller"], values: [v] }];
        const want = await full.prune(all, lookups);
        expect({ v, kept: await noBitsets.prune(all, lookups) }).toEqual({ v, kept: want });
        const more = await oneFile.prune(all, lookups);
        for (const f of want) expect(more).toContainEqual(f);
      }
    expect(noBitsets.stats.bloomReads).toBeGreaterThan(full.stats.bloomReads);
  });

  test("a paged file's whole-file filter rules a value out before any row group's", async () => {
    // 6 row groups of 2 048 rows, every row group spanning the whole range of ids (so min/max
    // prune nothing): only the filters can drop the file.
    const src = join(dir, "slices.parquet");
    const paged = join(dir, "slices-paged.parquet");
    await engine.run(
      `COPY (SELECT 'id-' || lpad(((i * 7919) % 12288)::VARCHAR, 6, '0') AS sid, i // 2048 AS slice FROM range(12288) t(i) ORDER BY slice, sid) ` +
        `TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, DICTIONARY_SIZE_LIMIT 1)`,
    );
    await repageParquet(src, paged, { rowsPerPage: 512, bloomColumns: new Set(["sid"]) });
    const index = new BloomIndex(async (sql) => (await engine.query(sql)).rows);
    const file = [{ absolutePath: paged }];
    const lookup = (v: string) => index.prune(file, [{ columns: ["sid"], values: [v] }]);
    // Every present value keeps the file (no false negative), checked once against the whole file.
    for (const k of [0, 1, 4095, 12287]) expect(await lookup(`id-${String(k).padStart(6, "0")}`)).toEqual(file);
    expect(index.stats.wholeFileChecks).toBe(4);
    // Absent values: dropped by the whole-file filter, with at most a rare false positive (0.1 %)
    // going on to the row groups.
    const groupsBefore = index.stats.rowGroups;
    let kept = 0;
    for (let k = 0; k < 200; k++) kept += (await lookup(`absent-${k}`)).length;
    expect(kept).toBeLessThanOrEqual(2);
    expect(index.stats.rowGroups - groupsBefore).toBeLessThanOrEqual(12);
    // DuckDB reads the file with the extra bytes and footer entry as before.
    const n = await engine.query(`SELECT count(*) AS n, count(DISTINCT sid) AS d FROM read_parquet('${paged}')`);
    expect({ n: Number(n.rows[0]!.n), d: Number(n.rows[0]!.d) }).toEqual({ n: 12288, d: 12288 });
  });
});
