/**
 * The appliance under the search benchmark (bench/search/run.ts, docs/BENCHMARKS.md "Search over 7
 * days / 100 M rows"): `src/main.ts serve` as a child process on a data set made by generate.ts,
 * its HTTP API after an admin login, dropping the data set from the OS page cache, and the CPU time
 * of a process and of the machine. With SVC_BENCH_CPU_PROF=<dir> in the environment each appliance
 * writes a CPU profile of its main thread there when it stops (Bun's --cpu-prof), to read with
 * Chrome's or any .cpuprofile viewer.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { testConfigJson } from "../../test/appliance.ts";

const PASSWORD = "search-bench-password";
const ROOT = join(import.meta.dir, "../..");

export type Strategy = "newest" | "stream" | "chunked" | "full";
export interface Item {
  sid?: string;
  session_id?: string;
  caller?: string;
  timestamp_us?: number;
  uuid?: string;
}
export interface Api {
  post(
    path: string,
    body: unknown,
  ): Promise<{
    status: number;
    json: { data?: { items?: Item[]; sessions?: string[]; rows?: unknown[] }; error?: string; message?: string };
  }>;
}

export interface Appliance {
  api: Api;
  pid: number;
  /**
   * Resolves once the appliance has logged the end of its lookup index warm-up after start
   * (src/lake/lookup-warm.ts), or after `timeoutMs`: the warm iterations then measure the steady state.
   */
  warmed(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the appliance on the data set in `dir` with the newest-100 strategy `strategy` and
 * storage.lakehouse.search.lazy_payload `lazyPayload`, and logs in as admin.
 */
export async function startAppliance(dir: string, strategy: Strategy, lazyPayload: boolean): Promise<Appliance> {
  const cfgPath = join(dir, "svc-bench.json");
  const cfg = testConfigJson(dir, {
    log: { level: "info" },
    coordinator: { auth: { admin_password_hash: new Bun.CryptoHasher("sha256").update(PASSWORD).digest("hex") } },
    // Production defaults for the lake except: no compaction or retention while measuring (the
    // data set is fixed and may be older than retention.days when re-run later).
    storage: {
      lakehouse: {
        flush_interval_sec: 30,
        tuning: { threads: 2, memory_limit: "4GB" },
        search: { lake_topn_strategy: strategy, lazy_payload: lazyPayload },
        compaction: { enable: false },
        retention: { days: 0 },
      },
    },
  });
  await Bun.write(cfgPath, JSON.stringify(cfg));
  const prof = process.env.SVC_BENCH_CPU_PROF;
  const profile = prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : [];
  const child = Bun.spawn([process.execPath, ...profile, "src/main.ts", "serve", "--config-path", cfgPath], {
    cwd: ROOT,
    stderr: "pipe",
    stdout: "ignore",
  });
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  const lines: string[] = [];
  let port = 0;
  // The lake opens in the second phase of the start (docs/ARCHITECTURE.md "Start-up"): lake routes
  // answer 503 STARTING until the appliance logs "svc started", so the cold query waits for it.
  let started = false;
  let warmedUp = false;
  let pending = "";
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      pending += decoder.decode(value, { stream: true });
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lines.push(line);
        try {
          const j = JSON.parse(line) as { msg?: string; module?: string; address?: string; level?: string };
          if (j.msg === "listening" && j.module === "coordinator-http" && j.address)
            port = Number(j.address.split(":").pop());
          else if (j.msg === "svc started") started = true;
          else if (j.msg === "lookup indexes warmed" || j.msg === "lookup index warm-up failed") warmedUp = true;
          else if (j.level === "error" || j.level === "warn")
            console.error(`  appliance ${j.level}: ${line.slice(0, 300)}`);
        } catch {
          /* not JSON */
        }
      }
    }
  })();
  const deadline = Date.now() + 120_000;
  while (!port || !started) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error("appliance did not start:\n" + lines.join("\n"));
    await Bun.sleep(20);
  }
  const base = `http://127.0.0.1:${port}/api/v4`;
  const login = await fetch(`${base}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const api: Api = {
    async post(path, body) {
      const r = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Awaited<ReturnType<Api["post"]>>["json"] };
    },
  };
  return {
    api,
    pid: child.pid,
    async warmed(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (!warmedUp && Date.now() < until && child.exitCode === null) await Bun.sleep(20);
    },
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
      await pump.catch(() => undefined);
    },
  };
}

/** Drops the lake's files from the OS page cache (clean pages only; no root needed). */
export function evictPageCache(dir: string): void {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(p);
    }
  };
  walk(join(dir, "lake"));
  files.push(join(dir, "catalog.sqlite"));
  const script =
    "import os,sys\nfor p in sys.stdin.read().split('\\n'):\n  if p:\n    fd=os.open(p,os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED); os.close(fd)\n";
  const r = Bun.spawnSync(["python3", "-c", script], { stdin: new TextEncoder().encode(files.join("\n")) });
  if (r.exitCode !== 0) throw new Error(`page cache eviction failed: ${r.stderr.toString()}`);
}

/**
 * Reads every data file of `table` (`<schema>/<table>` under the lake) once, so the OS page cache
 * holds it: the state of an appliance whose searches have met its files lately. Some guests give
 * back file cache untouched for a minute (DAMON's proactive reclaim: docs/BENCHMARKS.md "The
 * 100 M-row set with 8 KiB pages"), so run.ts does this right before each scenario's warm
 * iterations when asked. Returns the bytes read.
 */
export function cacheTableFiles(dir: string, table: string): number {
  const buf = Buffer.alloc(4 * 1024 * 1024);
  let bytes = 0;
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith(".parquet")) {
        const fd = openSync(p, "r");
        try {
          for (let got = readSync(fd, buf, 0, buf.length, null); got > 0; got = readSync(fd, buf, 0, buf.length, null))
            bytes += got;
        } finally {
          closeSync(fd);
        }
      }
    }
  };
  walk(join(dir, "lake", ...table.split(".")));
  return bytes;
}

/** utime + stime of a process in ms (/proc/<pid>/stat fields 14 and 15, clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Busy CPU time of the whole machine in ms (/proc/stat: all but idle and iowait). */
export function machineBusyMs(): number {
  const v = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (v.reduce((a, b) => a + b, 0) - v[3]! - v[4]!) * 10;
}
