/**
 * A hostile aggregate through the read-only SQL API (docs/OPERATIONS.md "Engine tuning", "Query
 * memory"): `string_agg` over many wide rows holds every value in DuckDB memory (it cannot spill),
 * so under storage.lakehouse.tuning.sql_memory_limit it is answered 413 with a message naming the
 * cap and no SQL, and the process keeps serving queries and writes.
 */
import { describe, expect, test } from "bun:test";
import { tempDir, waitFor } from "../harness.ts";
import { lpWrite, startLineProtocol } from "./lineproto-helpers.ts";

const ROWS = 30_000;
/** 2 KB a row: 60 MB of values; the hostile query aggregates each four times (240 MB), twice the 128MB cap. */
const WIDE = "h".repeat(2000);

describe("user SQL under sql_memory_limit", () => {
  test("string_agg over 240 MB is a 413 naming the cap, without SQL; the engine keeps answering and ingest keeps writing", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(
      dir.path,
      {},
      {
        storage: {
          lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000, tuning: { sql_memory_limit: "128MB" } },
        },
      },
    );
    const lake = s.a.app.lake!;
    const base = Date.now() - 3_600_000;
    for (let part = 0; part < ROWS; part += 3000) {
      const body = Array.from(
        { length: 3000 },
        (_, i) => `qmem,host=h i=${part + i}i,p="${WIDE}${part + i}" ${base + part + i}`,
      ).join("\n");
      expect((await lpWrite(s.lpUrl, "/write?precision=ms", body)).status).toBe(204);
    }
    await waitFor(
      "the rows accepted",
      async () => (lake.table("main.qmem") && lake.backlog() === ROWS) || undefined,
      30_000,
    );
    await lake.flush();
    expect(lake.backlog()).toBe(0);

    const hostile = "SELECT length(string_agg(p || p || p || p, '')) AS n FROM qmem";
    const r = await s.api.call("POST", "/query", { sql: hostile });
    expect(r.status).toBe(413);
    expect(r.json?.error).toBe("PAYLOAD_TOO_LARGE");
    expect(r.json?.message).toContain("storage.lakehouse.tuning.sql_memory_limit (128MB)");
    expect(r.text).not.toContain("FROM qmem");
    expect(r.text).not.toContain("svc_lake");
    expect(r.text).not.toContain(dir.path);

    // The same engine answers the next query, and a narrower aggregate goes through.
    const ok = await s.api.call("POST", "/query", { sql: "SELECT count(*) AS n, sum(length(p)) AS bytes FROM qmem" });
    expect(ok.status).toBe(200);
    expect((ok.json!.data as { rows: unknown[] }).rows).toEqual([
      { n: ROWS, bytes: ROWS * 2000 + [...Array(ROWS).keys()].reduce((t, i) => t + String(i).length, 0) },
    ]);
    // The search engine (tuning.memory_limit) never saw the query's memory: the writer flushes on.
    expect((await lpWrite(s.lpUrl, "/write?precision=ms", `qmem,host=h i=-1i,p="after" ${base + ROWS}`)).status).toBe(
      204,
    );
    await waitFor("the row after accepted", () => lake.backlog() === 1 || undefined);
    await lake.flush();
    const after = await s.api.call("POST", "/query", { sql: "SELECT count(*) AS n FROM qmem WHERE p = 'after'" });
    expect((after.json!.data as { rows: unknown[] }).rows).toEqual([{ n: 1 }]);
  }, 120_000);
});
