/**
 * Commits per second into one PostgreSQL DuckLake catalog with 1, 4 and 8 writers at once
 * (docs/BENCHMARKS.md "PostgreSQL catalog commits"): each writer is a PgCatalog with its own pool
 * (as a separate host would be) and loops for --seconds: reserve a path (newDataFilePath), write a
 * small file, commit it with its writer mark (commitDataFiles). Every commit takes the advisory
 * commit lock, so they run one after the other; the figure is what that lock allows. The table has
 * --columns columns with statistics for each (a lake table has 10-30). Files are plain bytes: the
 * catalog checks only their size. A fresh database per writer count, on a local PostgreSQL
 * started by test/peers/postgres.ts unless --url names one (its database must be empty).
 *   bun bench/pg-catalog-commits.ts [--seconds 10] [--writers 1,4,8] [--columns 12] [--url postgres://…]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createLogger } from "../src/core/index.ts";
import { PgCatalog } from "../src/lake/catalog-pg/index.ts";
import { startPostgres } from "../test/peers/postgres.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const seconds = Number(args.get("seconds") ?? 10);
const counts = (args.get("writers") ?? "1,4,8").split(",").map(Number);
const columnCount = Number(args.get("columns") ?? 12);
const given = args.get("url");
const pg = given === undefined ? await startPostgres("bench") : null;
const log = createLogger({ bench: true });

const columns = Array.from({ length: columnCount }, (_, i) => ({
  name: `c${i}`,
  type: i % 3 === 0 ? ("varchar" as const) : ("int64" as const),
}));

async function run(writers: number): Promise<Record<string, unknown>> {
  const url = pg === null ? given! : await pg.createDatabase(`w${writers}`);
  const dir = mkdtempSync(join(tmpdir(), "svc-pgbench-"));
  const cats = await Promise.all(
    Array.from({ length: writers }, (_, i) => PgCatalog.open({ url, dataPath: dir, owner: `bench-${i}`, log })),
  );
  try {
    const t = await cats[0]!.ensureTable("main", { name: "events", columns });
    const latencies: number[] = [];
    const deadline = performance.now() + seconds * 1000;
    const perWriter = await Promise.all(
      cats.map(async (cat, w) => {
        let n = 0;
        while (performance.now() < deadline) {
          const path = await cat.newDataFilePath(t.tableId);
          const abs = join(dir, path);
          mkdirSync(dirname(abs), { recursive: true });
          writeFileSync(abs, Buffer.alloc(256));
          const stats = Object.fromEntries(
            columns.map((c, i) => [
              c.name,
              {
                min: c.type === "varchar" ? `a${n}` : String(n),
                max: c.type === "varchar" ? `z${n}` : String(n + i),
                nullCount: 0,
              },
            ]),
          );
          const t0 = performance.now();
          await cat.commitDataFiles(
            t.tableId,
            [{ path, recordCount: 100, fileSizeBytes: 256, footerSize: 50, columnStats: stats }],
            [{ writerKey: `bench-${w}`, watermark: n }],
          );
          latencies.push(performance.now() - t0);
          n++;
        }
        return n;
      }),
    );
    const total = perWriter.reduce((a, b) => a + b, 0);
    latencies.sort((a, b) => a - b);
    const q = (p: number) =>
      Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 10) / 10;
    return {
      writers,
      seconds,
      columns: columnCount,
      commits: total,
      commits_per_s: Math.round((total / seconds) * 10) / 10,
      p50_ms: q(0.5),
      p99_ms: q(0.99),
      retries: cats.reduce((s, c) => s + c.stats.retries, 0),
      per_writer: perWriter,
    };
  } finally {
    await Promise.all(cats.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  for (const w of counts) console.log(JSON.stringify(await run(w)));
} finally {
  if (pg) await pg[Symbol.asyncDispose]();
}
