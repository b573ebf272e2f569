/**
 * kill -9 torture (docs/ARCHITECTURE.md "Durability: what a crash can lose"; required: "kill -9 torture during ingest + compaction + retention +
 * backup, 50 cycles: catalog opens, row counts exact, the stock DuckDB ducklake extension still
 * attaches the catalog"). One data directory lives through every cycle. Each cycle:
 *  1. starts `svc serve` (compaction every second with min_age_sec 0, engines alternating, default
 *     14-day retention) and checks what the previous kill left, once the start reloaded the spool:
 *     every committed row of every earlier cycle once, each in-flight stream a gap-free prefix;
 *  2. sends "a" rows (now) and "o" rows (20 days old: retention retires their files) over HEP/TCP
 *     and waits until the "a" rows are committed and the "o" rows received;
 *  3. keeps a paced "c" stream going, runs `svc catalog backup` back to back in child processes,
 *     and SIGKILLs the appliance and the running backup at a seeded random moment 0-2 s later;
 *  4. with both dead: the catalog opens read-only and passes its integrity check, every live file
 *     exists with its recorded size, the live files hold each Call-ID at most once and every "a" row
 *     sent so far, the stock ducklake extension attaches the catalog and counts the same rows, and
 *     every backup `svc catalog list` would show passes the integrity check.
 * At the end an in-process appliance replays the last spool and retention has removed every "o" row.
 * SVC_TEST_SEED replays a schedule; SVC_TEST_TORTURE_CYCLES changes the cycle count.
 */
import { expect } from "bun:test";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { listCatalogBackups } from "../../src/lake/index.ts";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { PEERS, peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { seeded } from "../fixtures/seeded.ts";
import { spawnPeer, type PeerProcess } from "../peers/process.ts";
import { spooledCallIds } from "../peers/spool.ts";

const ROOT = resolve(import.meta.dir, "../..");
const CYCLES = Number(process.env.SVC_TEST_TORTURE_CYCLES ?? 50);
const SEED = Number(process.env.SVC_TEST_SEED ?? 0x70a7);
const A_ROWS = 1500;
const O_ROWS = 300;
const C_RATE_PER_SEC = 3000;
const DAY_MS = 86_400_000;
const CALL = "hep_proto_1_call";

const childEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith("SVC_")),
  );
const frame = (callId: string, tsUs: number) =>
  encodeHep3({
    ipFamily: 4,
    ipProtocol: 6,
    srcIp: "10.7.0.1",
    dstIp: "10.7.0.2",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: tsUs,
    protoType: 1,
    captureId: 7,
    payload: invite({ callId, from: "t7a", to: "t7b" }),
  });

/** Writes `bytes` over one connection, waiting for drain; resolves once the kernel took every byte. */
async function writeAll(
  sock: Awaited<ReturnType<typeof Bun.connect>>,
  bytes: Uint8Array,
  onDrain: (r: () => void) => void,
): Promise<void> {
  let pending = bytes;
  while (pending.length > 0) {
    const n = sock.write(pending);
    pending = pending.subarray(n);
    if (pending.length > 0) await new Promise<void>((r) => onDrain(r));
  }
}

/** The catalog right after a kill: integrity, live files complete on disk; the call table's live files. */
function catalogAfterKill(dir: string): { files: string[]; rows: number; watermark: number; referenced: Set<string> } {
  const cat = openCatalog({ path: join(dir, "catalog.sqlite"), dataPath: join(dir, "lake"), readOnly: true });
  try {
    expect(cat.integrityCheck().problems).toEqual([]);
    const files: string[] = [];
    let rows = 0;
    for (const t of cat.listTables()) {
      for (const f of cat.listDataFiles(t.tableId, { stats: false })) {
        expect({ path: f.absolutePath, size: statSync(f.absolutePath, { throwIfNoEntry: false })?.size }).toEqual({
          path: f.absolutePath,
          size: f.fileSizeBytes,
        });
        if (t.name === CALL) {
          files.push(f.absolutePath);
          rows += f.recordCount;
        }
      }
    }
    return { files, rows, watermark: cat.writerWatermark(`main.${CALL}`) ?? 0, referenced: cat.referencedPaths() };
  } finally {
    cat.close();
  }
}

/** Committed call rows by stream ("a", "o", "c") and cycle: count, distinct, min and max sequence. */
async function perStream(
  con: DuckDBConnection,
  files: string[],
): Promise<Map<string, { n: number; d: number; lo: number; hi: number }>> {
  const out = new Map<string, { n: number; d: number; lo: number; hi: number }>();
  if (files.length === 0) return out;
  const r = await con.runAndReadAll(
    `SELECT split_part(session_id, '-', 1) || '-' || split_part(session_id, '-', 2) AS k, count(*) AS n, count(DISTINCT session_id) AS d,
            min(CAST(split_part(session_id, '-', 3) AS INTEGER)) AS lo, max(CAST(split_part(session_id, '-', 3) AS INTEGER)) AS hi
     FROM read_parquet([${files.map((f) => `'${f}'`).join(", ")}]) GROUP BY 1`,
  );
  for (const row of r.getRowObjectsJson())
    out.set(String(row.k), { n: Number(row.n), d: Number(row.d), lo: Number(row.lo), hi: Number(row.hi) });
  return out;
}

/** The child's HEP/TCP port and node HTTP address from its "listening" log lines. */
async function started(child: PeerProcess): Promise<{ hep: number; metrics: string }> {
  const addr = new Map<string, string>();
  await waitFor(
    "the child started",
    () => {
      if (child.proc.exitCode !== null)
        throw new Error(`child exited ${child.proc.exitCode}: ${child.output().slice(-2000)}`);
      for (const line of child.output().split("\n")) {
        if (!line.includes('"listening"')) continue;
        const l = JSON.parse(line) as { msg?: string; module?: string; address?: string };
        if (l.module && l.address) addr.set(l.module, l.address);
      }
      return child.output().includes('"msg":"svc started"') && addr.has("hep-tcp") && addr.has("coordinator-http");
    },
    30_000,
  );
  const hep = addr.get("hep-tcp")!;
  return {
    hep: Number(hep.slice(hep.lastIndexOf(":") + 1)),
    metrics: `http://${addr.get("coordinator-http")}/metrics`,
  };
}

peerTest(
  `kill -9 torture, ${CYCLES} cycles of ingest + compaction + retention + backup: catalog opens, row counts exact, the ducklake extension attaches`,
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-torture-");
    const rand = seeded(SEED);
    const cfgPath = join(dir.path, "config.json");
    const catalogPath = join(dir.path, "catalog.sqlite");
    const spoolDir = join(dir.path, "spool", `main.${CALL}`);
    const cStream = new Map<number, number>(); // cycle → "c" frames handed to the kernel
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    let aSent = 0;
    let backupsDone = 0;
    let backupsKilled = 0;
    let retiredLogged = 0;
    let killedMidWrite = 0;
    let merges = 0;
    try {
      for (let it = 0; it < CYCLES; it++) {
        const engine = it % 2 === 0 ? "duckdb" : "native";
        const lakehouse = {
          batch_size: 500,
          flush_interval_sec: 0.2,
          backups_kept: 3,
          compaction: { engine, check_interval_sec: 1, min_age_sec: 0, memory_limit: "192MB" },
        };
        await Bun.write(
          cfgPath,
          JSON.stringify(
            testConfigJson(dir.path, {
              storage: { lakehouse },
              log: { level: "debug" },
              coordinator: { auth: { admin_password_hash: sha256Hex("torture-admin") } },
            }),
          ),
        );
        const child = spawnPeer(`svc-${it}`, [process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], {
          dir: dir.path,
          cwd: ROOT,
          env: childEnv(),
        });
        let backup: PeerProcess | undefined;
        try {
          const { hep, metrics } = await started(child);
          // 1. The previous kill, once the start reloaded the spool into the lake.
          await waitFor(
            "the spool reloaded",
            async () => {
              const cat = openCatalog({ path: catalogPath, dataPath: join(dir.path, "lake"), readOnly: true });
              try {
                return (await spooledCallIds(spoolDir, cat.writerWatermark(`main.${CALL}`) ?? 0)).length === 0;
              } finally {
                cat.close();
              }
            },
            30_000,
          );
          const seen = await perStream(con, catalogAfterKill(dir.path).files);
          for (let j = 0; j < it; j++) {
            expect({ j, a: seen.get(`a-${j}`) }).toEqual({ j, a: { n: A_ROWS, d: A_ROWS, lo: 0, hi: A_ROWS - 1 } });
            const c = seen.get(`c-${j}`);
            // A gap-free prefix of the stream the kill cut: batches are sealed and reloaded in order.
            if (c) expect({ j, c }).toEqual({ j, c: { n: c.n, d: c.n, lo: 0, hi: c.n - 1 } });
            expect(c?.n ?? 0).toBeLessThanOrEqual(cStream.get(j) ?? 0);
            const o = seen.get(`o-${j}`);
            if (o) expect(o.d).toBe(o.n);
          }

          // 2. "a" rows committed, "o" rows received.
          let drained: () => void = () => {};
          const sock = await Bun.connect({
            hostname: "127.0.0.1",
            port: hep,
            socket: { data() {}, error() {}, drain: () => drained() },
          });
          const nowUs = Date.now() * 1000;
          const aFrames = Array.from({ length: A_ROWS }, (_, i) => frame(`a-${it}-${i}`, nowUs + i));
          const oFrames = Array.from({ length: O_ROWS }, (_, i) =>
            frame(`o-${it}-${i}`, nowUs - 20 * DAY_MS * 1000 + i),
          );
          await writeAll(sock, Buffer.concat([...aFrames, ...oFrames]), (r) => (drained = r));
          aSent += A_ROWS;
          await waitFor(
            `cycle ${it}: the "a" rows committed`,
            async () => {
              const s = (await perStream(con, catalogAfterKill(dir.path).files)).get(`a-${it}`);
              return s?.n === A_ROWS;
            },
            30_000,
          );
          await waitFor(`cycle ${it}: every frame received`, async () => {
            const m = /^svc_hep_packets_received_total\{transport="tcp"\} (\d+)$/m.exec(
              await (await fetch(metrics)).text(),
            );
            return m !== null && Number(m[1]) >= A_ROWS + O_ROWS;
          });

          // 3. The "c" stream, back-to-back backups, and the kill.
          let stop = false;
          let cBuilt = 0;
          const t0 = performance.now();
          const stream = (async () => {
            while (!stop) {
              const due = Math.floor(((performance.now() - t0) * C_RATE_PER_SEC) / 1000);
              const frames: Uint8Array[] = [];
              for (; cBuilt < due; cBuilt++) frames.push(frame(`c-${it}-${cBuilt}`, Date.now() * 1000));
              if (frames.length > 0) await writeAll(sock, Buffer.concat(frames), (r) => (drained = r));
              await Bun.sleep(5); // pacing of the offered load, not a wait for a condition
            }
          })();
          const backups = (async () => {
            for (let b = 0; !stop; b++) {
              backup = spawnPeer(
                `backup-${it}-${b}`,
                [process.execPath, "src/main.ts", "catalog", "backup", "--config-path", cfgPath],
                { dir: dir.path, cwd: ROOT, env: childEnv() },
              );
              const code = await backup.proc.exited;
              if (stop) break;
              expect({ code, out: code === 0 ? "" : backup.output() }).toEqual({ code: 0, out: "" });
              backupsDone++;
            }
          })();
          await Bun.sleep(Math.floor(rand() * 2000)); // the random kill moment is the experiment, not a condition
          stop = true;
          child.proc.kill("SIGKILL");
          if (backup && backup.proc.exitCode === null) {
            backup.proc.kill("SIGKILL");
            backupsKilled++;
          }
          await child.proc.exited;
          sock.terminate();
          drained();
          await stream.catch(() => {});
          await backups;
          cStream.set(it, cBuilt);
        } finally {
          child.proc.kill("SIGKILL");
          backup?.proc.kill("SIGKILL");
          await child.proc.exited;
        }
        expect(child.output()).not.toContain('"level":"error"');
        merges += child
          .output()
          .split("\n")
          .filter((l) => l.includes('"msg":"compacted"')).length;
        retiredLogged += child
          .output()
          .split("\n")
          .filter((l) => l.includes('"msg":"retention retired files"')).length;

        // 4. What the kill left.
        const atKill = catalogAfterKill(dir.path);
        // Parquet being written at the kill (a flush or a merge before its commit): the next start removes it.
        if (
          [...new Bun.Glob("**/*.parquet").scanSync({ cwd: join(dir.path, "lake"), absolute: true })].some(
            (p) => !atKill.referenced.has(p),
          )
        )
          killedMidWrite++;
        const rows = await perStream(con, atKill.files);
        let total = 0;
        for (const [k, s] of rows) {
          expect({ k, d: s.d }).toEqual({ k, d: s.n });
          total += s.n;
        }
        expect(total).toBe(atKill.rows);
        for (let j = 0; j <= it; j++) expect({ j, a: rows.get(`a-${j}`)?.n }).toEqual({ j, a: A_ROWS });
        const py = Bun.spawnSync([
          pyPeersPython(),
          join(ROOT, "test/peers/ducklake_query.py"),
          catalogPath,
          join(dir.path, "lake") + "/",
          `SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM l.main.${CALL}`,
        ]);
        expect(py.stderr.toString()).toBe("");
        expect(JSON.parse(py.stdout.toString())).toEqual([{ n: atKill.rows, d: atKill.rows }]);
        const listed = listCatalogBackups(catalogPath);
        expect(listed.length).toBeLessThanOrEqual(3 + 1); // backups_kept, plus one a kill stopped before its pruning
        for (const b of listed) {
          const cat = openCatalog({ path: b.path, dataPath: join(dir.path, "lake"), readOnly: true });
          try {
            expect({ backup: b.path, problems: cat.integrityCheck().problems }).toEqual({
              backup: b.path,
              problems: [],
            });
          } finally {
            cat.close();
          }
        }
      }

      // The last kill's spool comes back; retention removed every 20-day-old row.
      {
        const overrides = { storage: { lakehouse: { batch_size: 500, flush_interval_sec: 0.2 } } };
        await using a = await startTestAppliance(dir.path, overrides);
        await a.app.lake!.sync();
        await a.app.lake!.flush();
        await a.app.lake!.maintain();
      }
      const end = catalogAfterKill(dir.path);
      const rows = await perStream(con, end.files);
      for (let j = 0; j < CYCLES; j++) {
        expect({ j, a: rows.get(`a-${j}`) }).toEqual({ j, a: { n: A_ROWS, d: A_ROWS, lo: 0, hi: A_ROWS - 1 } });
        expect({ j, o: rows.get(`o-${j}`) }).toEqual({ j, o: undefined });
      }
      const cKept = [...cStream.keys()].reduce((s, j) => s + (rows.get(`c-${j}`)?.n ?? 0), 0);
      expect(end.rows).toBe(aSent + cKept);
      // The next backup removes what the killed ones left half-written (<catalog>.bak-<time>.tmp-<pid>).
      const last = Bun.spawnSync([process.execPath, "src/main.ts", "catalog", "backup", "--config-path", cfgPath], {
        cwd: ROOT,
        env: childEnv(),
      });
      expect({ code: last.exitCode, err: last.stderr.toString() }).toEqual({ code: 0, err: "" });
      expect(readdirSync(dir.path).filter((n) => n.includes(".tmp-"))).toEqual([]);
      expect(listCatalogBackups(catalogPath).length).toBe(3);
      console.log(
        `torture seed=${SEED} cycles=${CYCLES} rows=${end.rows} a=${aSent} c kept=${cKept}/${[...cStream.values()].reduce((x, y) => x + y, 0)} ` +
          `backups completed=${backupsDone} killed mid-backup=${backupsKilled} retention runs logged=${retiredLogged} merges=${merges} killed with Parquet being written=${killedMidWrite}`,
      );
      expect(backupsDone).toBeGreaterThan(0);
      expect(retiredLogged).toBeGreaterThan(0);
      // A short SVC_TEST_TORTURE_CYCLES run may end before the first merge; the 50 cycles never do.
      if (CYCLES >= 20) {
        expect(merges).toBeGreaterThan(0);
        expect(killedMidWrite).toBeGreaterThan(0);
      }
    } finally {
      con.closeSync();
      db.closeSync();
    }
  },
  900_000,
);
