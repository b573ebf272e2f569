/**
 * The spool watermark of one writer of a shared PostgreSQL catalog is its own (docs/DUCKLAKE.md
 * "Several writers", "Spool watermarks"): two `svc serve` children (test/peers/svc-child.ts) on one
 * catalog and data path. B seals rows into its spool and is killed (kill -9) before its flush; A then
 * commits rows it sealed later, with a higher watermark. When the watermark was keyed by the table
 * alone, B's restart took A's watermark for its own and dropped its sealed rows as committed.
 * After B's restart every row of both is in the catalog once.
 */
import { afterAll, expect } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { sha256Hex } from "../../src/auth/index.ts";
import { testConfigJson } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { hepInvite, spawnSvc, type SvcChild } from "../peers/svc-child.ts";

let server: Promise<Postgres> | undefined;
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

async function send(c: SvcChild, prefix: string, n: number): Promise<void> {
  const tcp = await Bun.connect({ hostname: "127.0.0.1", port: c.port("hep-tcp"), socket: { data() {}, error() {} } });
  const frames = Buffer.concat(Array.from({ length: n }, (_, i) => hepInvite(`${prefix}-${i}`, "tcp")));
  expect(tcp.write(frames)).toBe(frames.length);
  await waitFor(
    `${c.name} accepted ${n} rows`,
    async () => (await c.metric("svc_hep_rows_accepted_total")) >= n,
    30_000,
  );
  tcp.end();
}

/** Rows in sealed spool files (`<seq>.<columns>.<rows>.q1.csv` or `.parquet`) of the call table under `state`. */
function spooledRows(state: string): number {
  let rows = 0;
  try {
    for (const f of readdirSync(join(state, "spool", "main.hep_proto_1_call"))) {
      const m = /^\d+\.\d+\.(\d+)(?:(?:\.q1)?\.csv|\.parquet)$/.exec(f);
      if (m) rows += Number(m[1]);
    }
  } catch {
    return 0;
  }
  return rows;
}

peerTest(
  "kill -9 of one writer of a shared catalog: another writer's later commit does not make its spool look committed",
  [postgresPeer],
  async () => {
    await using dir = tempDir("svc-pg-watermark-");
    server ??= startPostgres();
    const pg = await server;
    const dataPath = join(dir.path, "lake/");
    const config = (name: string, flushSec: number) => {
      const own = join(dir.path, name);
      const cfg = testConfigJson(own, {
        log: { level: "info" },
        coordinator: { auth: { admin_password_hash: sha256Hex(name) } },
        storage: {
          lakehouse: {
            catalog_type: "postgres",
            catalog_path: pg.url,
            data_path: dataPath,
            state_path: join(own, "state"),
            flush_interval_sec: flushSec,
            batch_size: 100_000,
          },
        },
      });
      const path = join(dir.path, `${name}.json`);
      writeFileSync(path, JSON.stringify(cfg));
      return { path, state: join(own, "state") };
    };
    const a = config("a", 0.5);
    const b = config("b", 600);
    const childA = await spawnSvc("svc-a", a.path, {}, 90_000);
    let childB = await spawnSvc("svc-b", b.path, {}, 90_000);
    try {
      // B seals 100 rows into its spool (no flush for 10 minutes), then dies.
      await send(childB, "b", 100);
      await waitFor("b's rows sealed in its spool", () => spooledRows(b.state) === 100, 30_000);
      await childB.kill9();
      // A seals and commits 50 rows later: its watermark is above every seq of B's spool.
      await send(childA, "a", 50);
      await waitFor(
        "a's rows committed",
        async () => (await childA.metric("svc_lake_rows_written_total")) >= 50,
        30_000,
      );
      // B restarts: its spool above its own watermark is its buffer again, and a clean stop commits it.
      childB = await spawnSvc("svc-b-restarted", b.path, {}, 90_000);
      const stoppedB = await childB.stop();
      const stoppedA = await childA.stop();
      expect({ b: stoppedB.written, a: stoppedA.written }).toEqual({ b: 100, a: 50 });
      const sql = new SQL(pg.url, { max: 1 });
      try {
        const [r] =
          await sql`SELECT coalesce(sum(record_count), 0)::int AS n FROM ducklake_data_file WHERE end_snapshot IS NULL`;
        expect(r.n).toBe(150);
      } finally {
        await sql.close();
      }
    } finally {
      for (const c of [childA, childB]) if (c.proc.exitCode === null) await c.kill9();
    }
  },
  240_000,
);
