/**
 * HEP stream slots under attack (docs/ARCHITECTURE.md "HEP stream connections"): `--hosts`
 * hostile source addresses (127.0.1.1.., all local on Linux) each keep `--per-host` connections
 * trying to hold a slot, reconnecting `--retry-ms` after every refusal or close; a share
 * `--trickle-share` of the holders trickle one byte of a HEP frame every `--trickle-ms`
 * (slow-loris), the others stay silent. Once the attack holds the table, an agent that sent HEP before (127.0.0.250) and a new
 * agent (127.0.0.251) connect and send `--messages` INVITEs each, then one a second until the end.
 * The appliance runs in this process, its listeners on the ingest thread.
 *   bun bench/hep-slots.ts [--hosts 40] [--per-host 64] [--idle 5] [--seconds 20] [--messages 1000] [--trickle-share 1]
 *                          [--tcp '{"max_connections_per_ip":64}']   (more ingest.hep.tcp keys)
 * Prints one JSON line: hostile slots held, whether and how fast each agent got its messages
 * stored, how long trickling sockets lived, and svc_hep_connections_closed_total per reason.
 */
import net from "node:net";
import { encodeHep3 } from "../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../test/appliance.ts";
import { invite } from "../test/fixtures/sip.ts";
import { tempDir } from "../test/harness.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const num = (k: string, d: number) => Number(args.get(k) ?? d);
const hosts = num("hosts", 40);
const perHost = num("per-host", 64);
const idleSec = num("idle", 5);
const seconds = num("seconds", 20);
const messages = num("messages", 1000);
const trickleMs = num("trickle-ms", 2000);
const retryMs = num("retry-ms", 1000);
const trickleShare = num("trickle-share", 1);
const tcpExtra = JSON.parse(args.get("tcp") ?? "{}") as Record<string, unknown>;

const packet = (callId: string) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 6,
    timestampUs: Date.now() * 1000,
    protoType: 1,
    payload: invite({ callId, from: "a", to: "b" }),
  });

/** Connects from `from`; resolves with the socket once connected, or undefined when it was closed first (refused). */
function open(port: number, from: string): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port, localAddress: from });
    s.on("error", () => {});
    s.once("connect", () => {
      // A refusal by svc is a reset right after the accept: held means still open a moment later.
      setTimeout(() => resolve(s.destroyed ? undefined : s), 50);
    });
    s.once("close", () => resolve(undefined));
  });
}

const metric = (a: TestAppliance, re: RegExp) => [...a.app.metrics.render().matchAll(re)];

async function storedCount(a: TestAppliance, prefix: string): Promise<number> {
  await a.app.lake!.sync();
  const r = await a.app.lake!.query(
    `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
    [`${prefix}%`],
  );
  return Number(r.rows[0]!.n);
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]!);
};

await using dir = tempDir();
await using a = await startTestAppliance(dir.path, {
  ingest: { hep: { tcp: { idle_timeout_sec: idleSec, ...tcpExtra } } },
});
const port = a.app.ingest!.listeners.tcp!.port();
const started = performance.now();
const deadline = started + seconds * 1000;
let stopping = false;

// The known agent sent HEP before the attack (then its connection went away: a restart).
{
  const s = await open(port, "127.0.0.250");
  if (!s) throw new Error("the agent could not connect before the attack");
  s.write(packet("bench-warmup"));
  while ((await storedCount(a, "bench-warmup")) < 1) await Bun.sleep(20);
  s.destroy();
}

// The attack: hosts × perHost holders, each reconnecting after a refusal or a close.
/** Sockets a holder has (open 50 ms after the connect: a refusal is a reset right after the accept). */
let held = 0;
let connects = 0;
const trickleLives: number[] = [];
let trickleOpenAtEnd = 0;
/** Held sockets and when each was opened. */
const live = new Map<net.Socket, number>();
async function holder(from: string, trickle: boolean): Promise<void> {
  const bytes = packet(`bench-loris-${from}`);
  while (!stopping) {
    connects++;
    const s = await open(port, from);
    if (!s) {
      await Bun.sleep(retryMs);
      continue;
    }
    held++;
    const since = performance.now();
    live.set(s, since);
    let i = 0;
    const t = trickle
      ? setInterval(() => i < bytes.length && !s.destroyed && s.write(bytes.subarray(i, ++i)), trickleMs)
      : undefined;
    await new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once("close", () => resolve())));
    clearInterval(t);
    live.delete(s);
    held--;
    if (stopping) {
      if (trickle) trickleOpenAtEnd++;
      return;
    }
    if (trickle) trickleLives.push(performance.now() - since);
    await Bun.sleep(retryMs);
  }
}
const holders: Promise<void>[] = [];
for (let h = 1; h <= hosts; h++)
  for (let k = 0; k < perHost; k++) holders.push(holder(`127.0.1.${h}`, k < perHost * trickleShare));
while (performance.now() - started < 3000) await Bun.sleep(100);
const heldBeforeAgents = held;

/** An agent: connects (retrying each second), sends `messages` INVITEs, then one a second until the end. */
async function agent(from: string, prefix: string) {
  const t0 = performance.now();
  let attempts = 0;
  let s: net.Socket | undefined;
  while (!s && performance.now() < deadline) {
    attempts++;
    s = await open(port, from);
    if (!s) await Bun.sleep(1000);
  }
  if (!s) return { connected: false, attempts, stored: 0 };
  const connectMs = performance.now() - t0;
  for (let i = 0; i < messages; i++) s.write(packet(`${prefix}${i}`));
  let storedMs: number | null = null;
  let sent = messages;
  let closedBySvc = false;
  s.once("close", () => void (closedBySvc = !stopping));
  for (let tick = 0; performance.now() < deadline; tick++) {
    if (storedMs === null && (await storedCount(a, prefix)) >= messages) storedMs = performance.now() - t0;
    if (tick % 10 === 9 && !s.destroyed) s.write(packet(`${prefix}${sent++}`));
    await Bun.sleep(100);
  }
  const stored = await storedCount(a, prefix);
  s.destroy();
  return {
    connected: true,
    attempts,
    connect_ms: Math.round(connectMs),
    all_first_stored_ms: storedMs === null ? null : Math.round(storedMs),
    sent,
    stored,
    closed_by_svc: closedBySvc,
  };
}
const [known, fresh] = await Promise.all([agent("127.0.0.250", "bench-known-"), agent("127.0.0.251", "bench-new-")]);
const heldAtEnd = held;
const now = performance.now();
const oldestAtEnd = Math.max(0, ...[...live.values()].map((since) => now - since));
stopping = true;
for (const s of live.keys()) s.destroy();
await Promise.all(holders);

const closed = Object.fromEntries(
  metric(a, /^svc_hep_connections_closed_total\{transport="tcp",reason="(\w+)"\} (\d+)$/gm).map((m) => [
    m[1],
    Number(m[2]),
  ]),
);
console.log(
  JSON.stringify({
    config: {
      hosts,
      per_host: perHost,
      idle_timeout_sec: idleSec,
      trickle_ms: trickleMs,
      trickle_share: trickleShare,
      retry_ms: retryMs,
      seconds,
      ...tcpExtra,
    },
    hostile: { held_before_agents: heldBeforeAgents, held_at_end: heldAtEnd, connects },
    trickle_life_ms: {
      closed: trickleLives.length,
      p50: quantile(trickleLives, 0.5),
      max: quantile(trickleLives, 1),
      open_at_end: trickleOpenAtEnd,
      oldest_open_at_end_ms: Math.round(oldestAtEnd),
    },
    known_agent: known,
    new_agent: fresh,
    closed_by_svc: closed,
  }),
);
