import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { duckScratch } from "../../test/harness.ts";
import { repageParquet } from "../core/parquet/repage.ts";
import { PagedFiles } from "./page-index.ts";
import { PageMatcher } from "./page-match.ts";

describe("PageMatcher", () => {
  test("rows equal to lookup values are the rows DuckDB finds, NULLs, look-alike and multi-byte values included", async () => {
    await using scratch = await duckScratch("svc-match-");
    const { con, path: dir } = scratch;
    const src = join(dir, "duck.parquet");
    const paged = join(dir, "paged.parquet");
    // caller (PLAIN: most values unique): NULL every 13th row; values that are the tail or the
    // head of others ('12' inside 'u12', 'u1' the head of 'u12'), one holding the bytes 'u1' is
    // stored as (its length, then 'u1'); one multi-byte value.
    // callee and kind: few values, dictionary-encoded.
    await con.run(`COPY (
      SELECT 'c' || (i // 7) || '@h' AS sid,
             CASE WHEN i % 13 = 0 THEN NULL WHEN i % 101 = 0 THEN 'Zoë☎' WHEN i % 97 = 0 THEN 'q' || chr(2) || chr(0) || chr(0) || chr(0) || 'u1'
                  WHEN i % 3 = 0 THEN 'u' || (i % 300)
                  ELSE 'z' || i END AS caller,
             CASE WHEN i % 11 = 0 THEN NULL WHEN i % 5 = 0 THEN '12' ELSE 'x' || (i % 40) END AS callee,
             CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS kind,
             'INVITE ' || repeat('p', i % 90) AS payload
      FROM range(40000) r(i) ORDER BY sid
    ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384)`);
    await repageParquet(src, paged, { rowsPerPage: 500, minPageBytes: 512 });
    // The same with filters (the file's, the row groups' and the pages') on caller and callee.
    const filtered = join(dir, "filtered.parquet");
    await repageParquet(src, filtered, {
      rowsPerPage: 500,
      minPageBytes: 512,
      bloomColumns: new Set(["caller", "callee"]),
    });
    const layouts = new PagedFiles();
    const matcher = new PageMatcher(layouts);
    const groups = [0, 1, 2];
    const truth = async (where: string) =>
      (
        await con.runAndReadAll(
          `SELECT file_row_number AS n FROM read_parquet('${paged}', file_row_number = true) WHERE ${where} ORDER BY n`,
        )
      )
        .getRowObjectsJson()
        .map((r) => Number(r.n));
    const cases: Array<{ lookups: Array<{ columns: string[]; values: string[] }>; where: string }> = [
      { lookups: [{ columns: ["caller"], values: ["u12"] }], where: "caller = 'u12'" },
      { lookups: [{ columns: ["caller"], values: ["u1"] }], where: "caller = 'u1'" },
      { lookups: [{ columns: ["caller"], values: ["Zoë☎"] }], where: "caller = 'Zoë☎'" },
      { lookups: [{ columns: ["caller"], values: ["u7", "u299"] }], where: "caller IN ('u7', 'u299')" },
      { lookups: [{ columns: ["caller", "callee"], values: ["12"] }], where: "(caller = '12' OR callee = '12')" },
      {
        lookups: [
          { columns: ["caller"], values: ["u10", "u20"] },
          { columns: ["callee"], values: ["12"] },
        ],
        where: "caller IN ('u10', 'u20') AND callee = '12'",
      },
      { lookups: [{ columns: ["caller"], values: ["nobody"] }], where: "caller = 'nobody'" },
      { lookups: [{ columns: ["kind"], values: ["a"] }], where: "kind = 'a'" },
      { lookups: [{ columns: ["callee"], values: ["x7", "x9"] }], where: "callee IN ('x7', 'x9')" },
      // A column the file lacks is NULL in every row: nothing equals a value.
      { lookups: [{ columns: ["later"], values: ["u12"] }], where: "false" },
    ];
    for (const c of cases) {
      const want = { rows: await truth(c.where) };
      expect(matcher.match(paged, c.lookups, groups, 100_000)).toEqual(want);
      // Page filters skip pages, never rows.
      expect(matcher.match(filtered, c.lookups, groups, 100_000)).toEqual(want);
    }
    // Without filters every page of the chunk is read; with them, the one holding the value
    // (and a false positive now and then).
    const read = (file: string, value: string) => {
      const before = matcher.stats.pages;
      const got = matcher.match(file, [{ columns: ["caller"], values: [value] }], groups, 100_000);
      return { pages: matcher.stats.pages - before, got };
    };
    const one = { rows: await truth("caller = 'z12346'") };
    expect(one.rows).toHaveLength(1);
    expect(read(paged, "z12346")).toMatchObject({ got: one });
    expect(read(paged, "z12346").pages).toBeGreaterThan(20);
    expect(read(filtered, "z12346")).toMatchObject({ got: one });
    expect(read(filtered, "z12346").pages).toBeLessThanOrEqual(3);
    expect((await truth("caller = 'u12'")).length).toBeGreaterThan(20);
    // Both encodings are exercised.
    const encodings = (
      await con.runAndReadAll(
        `SELECT path_in_schema AS c, list_distinct(list(encodings)) AS e FROM parquet_metadata('${paged}') WHERE path_in_schema IN ('caller', 'callee') GROUP BY 1 ORDER BY 1`,
      )
    ).getRowObjectsJson();
    expect(JSON.stringify(encodings)).toContain("DICTIONARY");
    expect(JSON.stringify(encodings.find((e) => e.c === "caller"))).not.toContain("DICTIONARY");
    // Only the groups asked for are read.
    const second = await truth("caller = 'u12' AND file_row_number BETWEEN 16384 AND 32767");
    expect(matcher.match(paged, [{ columns: ["caller"], values: ["u12"] }], [1], 100_000)).toEqual({
      rows: second,
    });
    // More rows than the limit.
    expect(matcher.match(paged, [{ columns: ["caller"], values: ["u12"] }], groups, 10)).toEqual({ tooMany: true });
    // DuckDB's own file (one page per chunk, no offset index): its pages are found by their headers.
    for (const c of cases)
      expect(matcher.match(src, c.lookups, groups, 100_000)).toEqual({ rows: await truth(c.where) });
    // A file gone: refused.
    expect(matcher.match(join(dir, "gone.parquet"), [{ columns: ["caller"], values: ["u1"] }], [0], 10)).toEqual({
      refused: true,
    });
  });
});
