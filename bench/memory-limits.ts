/**
 * Memory and event-loop stall of the two requests any logged-in user can make big (docs/BENCHMARKS.md "Memory limits"):
 * a large user-SQL result (POST /query) and a PCAP of millions of empty records (POST
 * /imports/pcap). The appliance runs in this process; the client is curl in another, so only
 * the server's memory is measured. Peak RSS is VmHWM, reset before each request
 * (/proc/self/clear_refs); anonymous and file-backed RSS (a mapped upload) are sampled at each tick
 * of a 5 ms timer, and the stall is the largest gap between its ticks.
 * Run: ./node_modules/.bin/bun bench/memory-limits.ts [sql|pcap|both] [records=5900000] [max_records]
 * (max_records: coordinator.imports.max_records; above the records to see the parse, not the 413).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../src/auth/index.ts";
import { startTestAppliance } from "../test/appliance.ts";
import { tempDir } from "../test/harness.ts";

const mode = process.argv[2] ?? "both";
const records = Number(process.argv[3] ?? 5_900_000);
const maxRecords = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const PASSWORD = "bench-memory-password";
const MiB = 1024 * 1024;

const status = () => readFileSync("/proc/self/status", "utf8");
const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status())?.[1] ?? 0) * 1024;
const mib = (b: number) => Math.round(b / MiB);

/** Largest gap between timer ticks while `fn` runs, and the server's peak and settled RSS. */
async function measure(label: string, fn: () => Promise<string>): Promise<void> {
  Bun.gc(true);
  const before = kb("VmRSS");
  writeFileSync("/proc/self/clear_refs", "5");
  let last = performance.now();
  let maxGap = 0;
  let ticks = 0;
  let anonPeak = 0;
  let filePeak = 0;
  const timer = setInterval(() => {
    anonPeak = Math.max(anonPeak, kb("RssAnon"));
    filePeak = Math.max(filePeak, kb("RssFile"));
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks++;
  }, 5);
  const t0 = performance.now();
  const answer = await fn();
  const ms = performance.now() - t0;
  clearInterval(timer);
  const peak = kb("VmHWM");
  const after = kb("VmRSS");
  Bun.gc(true);
  const settled = kb("VmRSS");
  console.log(
    JSON.stringify({
      label,
      answer: answer.slice(0, 160),
      ms: Math.round(ms),
      rss_before_mib: mib(before),
      rss_peak_mib: mib(peak),
      anon_peak_sampled_mib: mib(anonPeak),
      file_peak_sampled_mib: mib(filePeak),
      rss_after_mib: mib(after),
      rss_after_gc_mib: mib(settled),
      max_timer_gap_ms: Math.round(maxGap),
      ticks,
    }),
  );
}

/** curl in its own process: its memory is not ours. */
async function curl(args: string[]): Promise<string> {
  const p = Bun.spawn(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", ...args], {
    stdout: "pipe",
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out;
}

/** A classic pcap (Ethernet) of `n` records with no captured bytes: 24 + 16·n bytes. */
function emptyRecordsPcap(path: string, n: number): void {
  const buf = new Uint8Array(24 + 16 * n);
  const dv = new DataView(buf.buffer);
  dv.setUint32(0, 0xa1b2c3d4, true);
  dv.setUint16(4, 2, true);
  dv.setUint16(6, 4, true);
  dv.setUint32(16, 65535, true);
  dv.setUint32(20, 1, true);
  for (let i = 0; i < n; i++) dv.setUint32(24 + 16 * i, 1_700_000_000 + Math.floor(i / 1000), true);
  writeFileSync(path, buf);
}

await using dir = tempDir();
await using a = await startTestAppliance(dir.path, {
  log: { level: "error" },
  coordinator: {
    auth: { admin_password_hash: sha256Hex(PASSWORD) },
    query_timeout_sec: 120,
    http_server: { max_body_bytes: 200 * MiB },
    ...(maxRecords ? { imports: { max_records: maxRecords } } : {}),
  },
});
const base = `${a.app.coordinatorUrl}/api/v4`;
const login = await fetch(`${base}/auth/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ username: "admin", password: PASSWORD }),
});
const token = ((await login.json()) as { token: string }).token;
const auth = ["-H", `authorization: Bearer ${token}`];
console.log(
  JSON.stringify({
    cpu: spawnSync("nproc").stdout.toString().trim(),
    bun: Bun.version,
    rss_idle_mib: mib(kb("VmRSS")),
  }),
);

if (mode === "sql" || mode === "both") {
  for (const [label, sql] of [
    ["sql 300 MB result (50000 rows × 6000 B)", "SELECT i, repeat('x', 6000) AS pad FROM range(50000) r(i)"],
    ["sql 30 MB result (50000 rows × 600 B)", "SELECT i, repeat('x', 600) AS pad FROM range(50000) r(i)"],
    ["sql 300 MB in one value", "SELECT repeat('x', 300000000) AS pad"],
    ["sql 300 MB in one chunk (2048 rows × 150 KB)", "SELECT i, repeat('x', 150000) AS pad FROM range(2048) r(i)"],
  ] as const) {
    const body = JSON.stringify({ sql, limit: 50_000 });
    await measure(label, () =>
      curl([...auth, "-H", "content-type: application/json", "--data-binary", body, `${base}/query`]),
    );
  }
}

if (mode === "pcap" || mode === "both") {
  const path = join(dir.path, "empty-records.pcap");
  emptyRecordsPcap(path, records);
  await measure(`pcap ${records} empty records (${mib(24 + 16 * records)} MiB)`, () =>
    curl([...auth, "-F", `file=@${path}`, `${base}/imports/pcap`]),
  );
}
