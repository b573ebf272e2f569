/**
 * Searches through the appliance over a lake on S3 (moto on loopback) against the same lake on
 * local disk (docs/BENCHMARKS.md "Searches through the appliance: S3 against local disk"): an
 * in-process appliance per data path, its lake built from HEP over HTTP (`POST /api/v1/hep`), one
 * flush per `--rows` calls of a minute, `--files` files in all; then, timed at the client through
 * the whole HTTP stack (`POST /api/v4/transactions/search`):
 *  - newest-100: the newest 100 calls of the whole range (the catalog's time statistics prune the
 *    files to the newest ones);
 *  - Call-ID: one call by its Call-ID over the whole range (random ids: the min/max statistics
 *    prune nothing, the point-lookup pruning decides).
 * Each read: the first request (cold: on S3 the read cache holds nothing yet) and the median of
 * `--runs` more (warm). S3 runs twice: with the default read cache and with `read_cache_bytes` 0
 * (every request fetches what it reads). Every answer is checked (100 rows, newest first; the
 * Call-ID's one row).
 *   bun bench/remote-search.ts [--files 500] [--rows 50] [--runs 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../src/auth/index.ts";
import { encodeHep3 } from "../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../test/appliance.ts";
import { invite } from "../test/fixtures/sip.ts";
import { startMoto } from "../test/peers/moto.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const FILES = Number(args.get("files") ?? 500);
const ROWS = Number(args.get("rows") ?? 50);
const RUNS = Number(args.get("runs") ?? 10);
const PASSWORD = "bench-remote-search";
const MINUTE_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), "svc-bench-remote-search-"));
const moto = await startMoto(dir);
const s3 = {
  region: "us-east-1",
  access_key_id: moto.accessKeyId,
  secret_access_key: moto.secretAccessKey,
  endpoint: moto.endpoint,
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = async () => (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
/** The data: FILES minutes ending a minute ago (inside any retention). */
const t0 = Date.now() - (FILES + 1) * MINUTE_MS;
const window = { from: t0 - MINUTE_MS, to: t0 + (FILES + 1) * MINUTE_MS };
const callId = (f: number, i: number) => `rs-${f}-${i}-${(f * 7919 + i * 104729) % 1_000_003}@bench`;

async function appliance(name: string, lakehouse: Record<string, unknown>): Promise<TestAppliance> {
  return await startTestAppliance(join(dir, name), {
    log: { level: "error" },
    ingest: { hep: { threads: 0 } },
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    storage: {
      lakehouse: {
        flush_interval_sec: 3600,
        batch_size: 1_000_000,
        compaction: { enable: false },
        tuning: { threads: 2, memory_limit: "512MB" },
        ...lakehouse,
      },
    },
  });
}

/** FILES flushes of ROWS INVITEs each, a minute apart; answers the build time in ms. */
async function build(a: TestAppliance): Promise<number> {
  const t = performance.now();
  for (let f = 0; f < FILES; f++) {
    const packets: Uint8Array[] = [];
    for (let i = 0; i < ROWS; i++) {
      const at = t0 + f * MINUTE_MS + Math.floor((i * MINUTE_MS) / ROWS);
      packets.push(
        encodeHep3({
          srcIp: "192.0.2.1",
          dstIp: "192.0.2.2",
          srcPort: 5060,
          dstPort: 5060,
          ipProtocol: 17,
          timestampUs: at * 1000,
          protoType: 1,
          payload: invite({ callId: callId(f, i), from: `u${i}`, to: `v${f}` }),
        }),
      );
    }
    const r = await fetch(`${a.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
    if (r.status !== 202) throw new Error(`HEP POST ${r.status} ${await r.text()}`);
    await a.app.lake!.flush();
  }
  return performance.now() - t;
}

interface Item {
  sid?: string;
  timestamp_us?: number;
}

async function measure(a: TestAppliance): Promise<{ newest: [number, number]; callid: [number, number] }> {
  const api = `${a.app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const search = async (filter: Record<string, unknown>): Promise<{ ms: number; items: Item[] }> => {
    const t = performance.now();
    const r = await fetch(`${api}/transactions/search`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        filter: { proto_type: 1, event_type: "call", ...filter },
        param: { limit: 100 },
        timestamp: window,
      }),
    });
    const j = (await r.json()) as { data?: { items?: Item[] } };
    const ms = performance.now() - t;
    if (r.status !== 200)
      throw new Error(`search ${JSON.stringify(filter)}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
    return { ms, items: j.data?.items ?? [] };
  };
  const newest = async () => {
    const { ms, items } = await search({});
    const ts = items.map((i) => Number(i.timestamp_us));
    if (
      items.length !== 100 ||
      ts.some((x, i) => i > 0 && x > ts[i - 1]!) ||
      Math.max(...ts) < (t0 + (FILES - 1) * MINUTE_MS) * 1000
    )
      throw new Error(`newest-100: ${items.length} rows or not the newest`);
    return ms;
  };
  let n = 0;
  const byCallId = async () => {
    const f = (n * 211) % FILES;
    const i = (n++ * 13) % ROWS;
    const { ms, items } = await search({ call_id: callId(f, i) });
    if (items.length !== 1 || items[0]!.sid !== callId(f, i))
      throw new Error(`Call-ID ${callId(f, i)}: ${items.length} rows`);
    return ms;
  };
  const first = [await newest(), await byCallId()] as const;
  const warmNewest: number[] = [];
  const warmCall: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    warmNewest.push(await newest());
    warmCall.push(await byCallId());
  }
  return { newest: [first[0], median(warmNewest)], callid: [first[1], median(warmCall)] };
}

try {
  const results: Array<{
    lake: string;
    buildMs: number;
    files: number;
    m: Awaited<ReturnType<typeof measure>>;
    load: string;
  }> = [];
  const local = await appliance("local", { data_path: join(dir, "local/lake/") });
  try {
    const buildMs = await build(local);
    results.push({
      lake: "local disk",
      buildMs,
      files: (await local.app.lake!.files("main.hep_proto_1_call")).length,
      m: await measure(local),
      load: await load(),
    });
  } finally {
    await local[Symbol.asyncDispose]();
  }
  for (const [label, cache] of [
    ["S3 (moto), read cache 10 GiB", undefined],
    ["S3 (moto), read cache 0", 0],
  ] as const) {
    const name = cache === 0 ? "s3-nocache" : "s3";
    const a = await appliance(name, {
      data_path: `s3://${moto.bucket}/${name}/`,
      s3,
      ...(cache === undefined ? {} : { read_cache_bytes: cache }),
    });
    try {
      const buildMs = await build(a);
      results.push({
        lake: label,
        buildMs,
        files: (await a.app.lake!.files("main.hep_proto_1_call")).length,
        m: await measure(a),
        load: await load(),
      });
    } finally {
      await a[Symbol.asyncDispose]();
    }
  }
  console.log(`${FILES} files of ${ROWS} calls, ${RUNS} warm runs; ms at the client`);
  console.log(
    "| lake | files | build | newest-100 first | newest-100 warm (median) | Call-ID first | Call-ID warm (median) | load |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    const f = (x: number) => Math.round(x).toLocaleString("en").replace(/,/g, " ");
    console.log(
      `| ${r.lake} | ${r.files} | ${(r.buildMs / 1000).toFixed(1)} s | ${f(r.m.newest[0])} | ${f(r.m.newest[1])} | ${f(r.m.callid[0])} | ${f(r.m.callid[1])} | ${r.load} |`,
    );
  }
} finally {
  await moto[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
