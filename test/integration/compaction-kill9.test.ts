/**
 * kill -9 during compaction (required: "kill -9 torture during ingest + compaction …: catalog opens,
 * row counts exact, the stock DuckDB ducklake extension still attaches the catalog"). Each iteration
 * starts `svc serve` (compaction every second, min_age_sec 0; engines alternate), sends a batch of
 * INVITEs over HEP/TCP, waits until every row is committed, waits for a merge to be writing (a
 * Parquet file the catalog does not reference), and SIGKILLs the process a random 0-100 ms later.
 * Then, with the process dead:
 *  - the catalog opens read-only, its integrity check passes, every live file exists complete;
 *  - the live files hold exactly every row sent so far (each Call-ID once): a kill before the swap
 *    leaves the old files, after it the merged one, never both and never neither;
 *  - a stock DuckDB with the ducklake extension attaches the catalog and counts the same rows.
 * The next start removes the merge's leftover (an uncommitted merged file).
 */
import { expect } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { testConfigJson } from "../appliance.ts";
import { PEERS, peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { spawnPeer } from "../peers/process.ts";
import { seeded } from "../fixtures/seeded.ts";

const ROOT = resolve(import.meta.dir, "../..");
const ITERATIONS = 8;
const PER_ITERATION = 6000;
const SEED = Number(process.env.SVC_TEST_SEED ?? 0xc0a1);

/** The caller's environment minus SVC_* (the child reads its config from the file only). */
const childEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith("SVC_")),
  );

/** Sends `n` INVITEs with Call-IDs `<prefix>-<seq>` over one TCP connection, all handed to the kernel. */
async function sendInvites(port: number, prefix: string, n: number): Promise<void> {
  const t0 = Date.now() * 1000;
  const frames: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    frames.push(
      encodeHep3({
        ipFamily: 4,
        ipProtocol: 6,
        srcIp: "10.8.0.1",
        dstIp: "10.8.0.2",
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: t0 + i * 50,
        protoType: 1,
        captureId: 8,
        payload: invite({ callId: `${prefix}-${i}`, from: `a${i}`, to: `b${i}` }),
      }),
    );
  }
  let pending: Uint8Array = Buffer.concat(frames);
  let drained: () => void = () => {};
  const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, drain: () => drained() } });
  while (pending.length > 0) {
    const wrote = sock.write(pending);
    pending = pending.subarray(wrote);
    if (pending.length > 0) await new Promise<void>((r) => (drained = r));
  }
  sock.end();
}

/** Rows of the call table's live files per the catalog, those files, and every referenced path (read-only open, no lock). */
function committed(dir: string): {
  rows: number;
  files: Array<{ path: string; size: number }>;
  referenced: Set<string>;
} {
  const cat = openCatalog({ path: join(dir, "catalog.sqlite"), dataPath: join(dir, "lake"), readOnly: true });
  try {
    const t = cat.getTable("main", "hep_proto_1_call");
    const files = t ? cat.listDataFiles(t.tableId, { stats: false }) : [];
    return {
      rows: files.reduce((s, f) => s + f.recordCount, 0),
      files: files.map((f) => ({ path: f.absolutePath, size: f.fileSizeBytes })),
      referenced: cat.referencedPaths(),
    };
  } finally {
    cat.close();
  }
}

/** Parquet files under the data path the catalog does not reference (once every row is committed: a merge being written). */
const unreferenced = (dir: string) => {
  const referenced = committed(dir).referenced;
  return [...new Bun.Glob("**/ducklake-*.parquet").scanSync({ cwd: join(dir, "lake"), absolute: true })].filter(
    (p) => !referenced.has(p),
  );
};

peerTest(
  `kill -9 during compaction, ${ITERATIONS} times: the catalog opens with exact row counts and the ducklake extension attaches it`,
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-ckill9-");
    const rand = seeded(SEED);
    const cfgPath = join(dir.path, "config.json");
    let sent = 0;
    let midMerge = 0;
    let leftover: string[] = [];
    for (let it = 0; it < ITERATIONS; it++) {
      const engine = it % 2 === 0 ? "duckdb" : "native";
      const lakehouse = {
        batch_size: 500,
        flush_interval_sec: 0.2,
        compaction: { engine, check_interval_sec: 1, min_age_sec: 0, memory_limit: "192MB" },
      };
      await Bun.write(
        cfgPath,
        JSON.stringify(
          testConfigJson(dir.path, {
            storage: { lakehouse },
            log: { level: "info" },
            coordinator: { auth: { admin_password_hash: sha256Hex("ckill9-admin") } },
          }),
        ),
      );
      const child = spawnPeer(`svc-${it}`, [process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], {
        dir: dir.path,
        cwd: ROOT,
        env: childEnv(),
      });
      try {
        const addr = await waitFor(
          "the child's HEP/TCP listener",
          () => {
            if (child.proc.exitCode !== null)
              throw new Error(`child exited ${child.proc.exitCode}: ${child.output().slice(-2000)}`);
            for (const line of child.output().split("\n")) {
              if (!line.includes('"listening"')) continue;
              const l = JSON.parse(line) as { msg?: string; module?: string; address?: string };
              if (l.msg === "listening" && l.module === "hep-tcp") return l.address;
            }
            return undefined;
          },
          20_000,
        );
        // The start removed the previous kill's unfinished merged file.
        await waitFor("the child started", () => child.output().includes('"msg":"svc started"'));
        expect(unreferenced(dir.path).filter((p) => leftover.includes(p))).toEqual([]);
        const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
        // A merge writing its window files, then the kill a random moment later. Compaction may
        // have merged everything before the rows were all seen committed: a few more rows then
        // make new small files, which the next cycle merges with the rest again.
        for (let batch = 0; ; batch++) {
          const n = batch === 0 ? PER_ITERATION : 500;
          await sendInvites(port, `ck-${it}-${batch}`, n);
          sent += n;
          await waitFor(`all ${sent} rows committed`, () => committed(dir.path).rows === sent, 30_000);
          const merging = await waitFor("a merge in progress", () => unreferenced(dir.path).length > 0, 3_000, 2).then(
            () => true,
            () => false,
          );
          if (merging) break;
          if (batch === 5) throw new Error(`no merge seen after ${batch + 1} batches: ${child.output().slice(-2000)}`);
        }
        await Bun.sleep(Math.floor(rand() * 100)); // the random kill moment is the experiment, not a condition
      } finally {
        child.proc.kill("SIGKILL");
        await child.proc.exited;
      }
      leftover = unreferenced(dir.path);
      if (leftover.length > 0) midMerge++;
      expect(child.output()).not.toContain('"level":"error"');

      // The catalog as the kill left it.
      const cat = openCatalog({
        path: join(dir.path, "catalog.sqlite"),
        dataPath: join(dir.path, "lake"),
        readOnly: true,
      });
      try {
        expect(cat.integrityCheck().problems).toEqual([]);
      } finally {
        cat.close();
      }
      const now = committed(dir.path);
      expect({ it, rows: now.rows }).toEqual({ it, rows: sent });
      for (const f of now.files)
        expect({ path: f.path, size: statSync(f.path, { throwIfNoEntry: false })?.size }).toEqual({
          path: f.path,
          size: f.size,
        });
      // The rows in those files, read by DuckDB: every Call-ID sent, once.
      const db = await DuckDBInstance.create(":memory:");
      const con = await db.connect();
      try {
        const r = await con.runAndReadAll(
          `SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM read_parquet([${now.files.map((f) => `'${f.path}'`).join(", ")}])`,
        );
        expect(r.getRowObjectsJson()[0]).toEqual({ n: String(sent), d: String(sent) });
      } finally {
        con.closeSync();
        db.closeSync();
      }
      // The stock extension attaches the catalog and counts the same rows.
      const py = Bun.spawnSync([
        pyPeersPython(),
        join(ROOT, "test/peers/ducklake_query.py"),
        join(dir.path, "catalog.sqlite"),
        join(dir.path, "lake") + "/",
        "SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM l.main.hep_proto_1_call",
      ]);
      expect(py.stderr.toString()).toBe("");
      expect(JSON.parse(py.stdout.toString())).toEqual([{ n: sent, d: sent }]);
    }
    console.log(
      `compaction kill9 seed=${SEED} iterations=${ITERATIONS} rows=${sent} killed with a merge in progress: ${midMerge}`,
    );
    expect(midMerge).toBeGreaterThan(0);
  },
  240_000,
);
