/**
 * loadgen call figures (docs/LOADGEN.md "Verified against"; docs/BENCHMARKS.md "loadgen calls"): `--calls` calls at `--rate`
 * calls/s both ways against Debian's sipp (loadgen UAC → sipp UAS, sipp UAC → loadgen UAS) with the
 * failed-call count of each side, then the sustained rate with loadgen on both ends vs sipp on both
 * ends at `--max-rate` (calls completed / wall time). Each program runs as its own process.
 *   bun bench/loadgen/calls.ts [--calls 1000] [--rate 100] [--max-rate 2000] [--max-calls 20000]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const CALLS = Number(args.get("calls") ?? 1000);
const RATE = Number(args.get("rate") ?? 100);
const MAX_RATE = Number(args.get("max-rate") ?? 2000);
const MAX_CALLS = Number(args.get("max-calls") ?? 20000);
const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const dir = mkdtempSync(join(tmpdir(), "svc-bench-loadgen-"));

async function freePort(): Promise<number> {
  const s = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
  const p = s.port;
  s.close();
  return p;
}

const loadgen = (a: string[]) => [process.execPath, MAIN, "loadgen", ...a];
const sipp = (a: string[]) => ["sipp", "-i", "127.0.0.1", "-nostdin", ...a];

/** Starts the server, waits a moment for its bind, runs the client to the end; returns both results. */
async function pair(name: string, server: string[], client: string[]) {
  const summary = join(dir, `${name}.json`);
  const srv = Bun.spawn(server, { stdout: "pipe", stderr: "pipe" });
  await Bun.sleep(800);
  const t0 = performance.now();
  const cli = Bun.spawn(
    client.map((a) => a.replace("@SUMMARY@", summary)),
    { stdout: "pipe", stderr: "pipe" },
  );
  const clientCode = await cli.exited;
  const wall = (performance.now() - t0) / 1000;
  const serverCode = await Promise.race([srv.exited, Bun.sleep(10_000).then(() => (srv.kill(), -1))]);
  const out = (await new Response(cli.stdout).text()) + (await new Response(srv.stdout).text());
  const failed =
    [...out.matchAll(/Failed call\s*\|\s*\d+\s*\|\s*(\d+)/g)].at(-1)?.[1] ??
    [...out.matchAll(/failed=(\d+)/g)].at(-1)?.[1];
  let lg = "";
  try {
    const s = JSON.parse(readFileSync(summary, "utf8"));
    lg = ` loadgen ok=${s.calls_successful} failed=${s.calls_failed} retrans=${s.retransmissions}`;
  } catch {
    // sipp on the client side: no loadgen summary
  }
  console.log(
    `${name}: client exit ${clientCode}, server exit ${serverCode}, ${wall.toFixed(2)} s wall, last failed=${failed ?? "?"}${lg}`,
  );
  return wall;
}

const p1 = await freePort();
await pair(
  "loadgen UAC → sipp UAS",
  sipp(["-sn", "uas", "-p", String(p1), "-m", String(CALLS)]),
  loadgen(["-sn", "uac", `127.0.0.1:${p1}`, "-r", String(RATE), "-m", String(CALLS), "-summary_json", "@SUMMARY@"]),
);
const p2 = await freePort();
await pair(
  "sipp UAC → loadgen UAS",
  loadgen(["-sn", "uas", "-p", String(p2), "-m", String(CALLS)]),
  sipp(["-sn", "uac", `127.0.0.1:${p2}`, "-r", String(RATE), "-m", String(CALLS)]),
);
const p3 = await freePort();
const lgWall = await pair(
  "loadgen ↔ loadgen",
  loadgen(["-sn", "uas", "-p", String(p3), "-m", String(MAX_CALLS)]),
  loadgen([
    "-sn",
    "uac",
    `127.0.0.1:${p3}`,
    "-r",
    String(MAX_RATE),
    "-m",
    String(MAX_CALLS),
    "-summary_json",
    "@SUMMARY@",
  ]),
);
const p4 = await freePort();
const sippWall = await pair(
  "sipp ↔ sipp",
  sipp(["-sn", "uas", "-p", String(p4), "-m", String(MAX_CALLS)]),
  sipp(["-sn", "uac", `127.0.0.1:${p4}`, "-r", String(MAX_RATE), "-m", String(MAX_CALLS)]),
);
console.log(
  `sustained: loadgen ${(MAX_CALLS / lgWall).toFixed(0)} calls/s, sipp ${(MAX_CALLS / sippWall).toFixed(0)} calls/s (asked ${MAX_RATE})`,
);
rmSync(dir, { recursive: true, force: true });
