/**
 * Latency of the reads of a coordinator over several nodes (docs/ARCHITECTURE.md "Coordinator over
 * several nodes", "Reads over several nodes") with 1, 2, 4 and 8 nodes on this machine: every node
 * is `svc serve` in a child process on loopback holding `--rows` calls in its write buffer, the
 * coordinator runs in-process with an empty lake of its own (the histogram and the call view are
 * served by a coordinator with a lake). Per node count: median and p90 of `--runs` requests of
 * the newest 100 (`POST /transactions/search`), the histogram of the hour and one call's view.
 *   bun bench/fan-out-search.ts [--nodes 1,2,4,8] [--rows 20000] [--runs 30]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../src/auth/index.ts";
import { encodeHep3 } from "../src/hep/index.ts";
import { startTestAppliance, testConfigJson } from "../test/appliance.ts";
import { invite } from "../test/fixtures/sip.ts";
import { waitFor } from "../test/harness.ts";
import { startChildAppliance } from "./child-appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const COUNTS = (args.get("nodes") ?? "1,2,4,8").split(",").map(Number);
const ROWS = Number(args.get("rows") ?? 20_000);
const RUNS = Number(args.get("runs") ?? 30);
const PASSWORD = "bench-fan-out-password";
const MAX = Math.max(...COUNTS);
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-fan-out-bench-"));
const now = Date.now();

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

// --- the nodes: child processes, each with its own calls over the last hour ------------------
const nodes: Array<{ url: string }> = [];
for (let n = 0; n < MAX; n++) {
  const d = join(dir, `node-${n}`);
  const cfgPath = join(d, "svc.json");
  const cfg = testConfigJson(d, {
    log: { level: "info" },
    ingest: { hep: { threads: 0 } },
    storage: { lakehouse: { flush_interval_sec: 3600, tuning: { threads: 1, memory_limit: "384MB" } } },
  });
  await Bun.write(cfgPath, JSON.stringify(cfg));
  const c = await startChildAppliance(cfgPath, ["node-http"], 60_000);
  const url = `http://127.0.0.1:${c.port("node-http")}`;
  for (let from = 0; from < ROWS; from += 2_000) {
    const packets: Uint8Array[] = [];
    for (let i = from; i < Math.min(ROWS, from + 2_000); i++) {
      const at = now - 3_600_000 + Math.floor((i / ROWS) * 3_500_000) + n;
      packets.push(
        encodeHep3({
          srcIp: "192.0.2.1",
          dstIp: "192.0.2.2",
          srcPort: 5060,
          dstPort: 5060,
          ipProtocol: 17,
          timestampUs: at * 1000,
          protoType: 1,
          payload: invite({ callId: `n${n}-${i}@bench`, from: `u${i % 97}`, to: `v${i % 89}` }),
        }),
      );
    }
    const r = await fetch(`${url}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
    if (r.status !== 202) throw new Error(`node ${n}: HEP POST ${r.status} ${await r.text()}`);
  }
  const rows = async () =>
    ((await (await fetch(`${url}/api/v1/metadata/stats`)).json()) as { row_count: number }).row_count;
  await waitFor(`node ${n}: all ${ROWS} calls stored`, async () => (await rows()) >= ROWS || undefined, 300_000, 200);
  nodes.push({ url });
  console.error(`node ${n}: ${ROWS} calls at ${url}`);
}

// --- one coordinator per node count, in-process, measured --------------------------------------
console.log(
  `| nodes | search newest 100: median / p90 ms | histogram 1 h by method: median / p90 ms | call view of one Call-ID: median / p90 ms |`,
);
console.log(`|---|---|---|---|`);
for (const count of COUNTS) {
  await using coord = await startTestAppliance(join(dir, `coord-${count}`), {
    log: { level: "error" },
    ingest: { hep: { enable: false } },
    coordinator: {
      auth: { admin_password_hash: sha256Hex(PASSWORD) },
      nodes: nodes.slice(0, count).map((x, i) => ({ name: `n${i}`, url: x.url })),
    },
    storage: { lakehouse: { tuning: { threads: 1, memory_limit: "256MB" } } },
  });
  const api = `${coord.app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const post = async (path: string, body: unknown) => {
    const t = performance.now();
    const r = await fetch(`${api}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const j = (await r.json()) as { meta?: { partial?: boolean } };
    if (!r.ok || j.meta?.partial) throw new Error(`${path}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
    return performance.now() - t;
  };
  const window = { from: now - 3_600_000, to: now + 60_000 };
  const reads = {
    search: () =>
      post("/transactions/search", {
        filter: { proto_type: 1, event_type: "call" },
        param: { limit: 100 },
        timestamp: window,
      }),
    histogram: () =>
      post("/transactions/histogram", {
        filter: { proto_type: 1, event_type: "call" },
        timestamp: window,
        group_by: "method",
      }),
    call: () => post("/transactions/messages", { session_id: `n0-${Math.floor(ROWS / 2)}@bench`, timestamp: window }),
  };
  const cells: string[] = [];
  for (const read of Object.values(reads)) {
    for (let i = 0; i < 3; i++) await read(); // warm: metadata checks, DuckDB caches
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) ms.push(await read());
    cells.push(`${quantile(ms, 0.5).toFixed(1)} / ${quantile(ms, 0.9).toFixed(1)}`);
  }
  console.log(`| ${count} | ${cells.join(" | ")} |`);
}
process.exit(0);
