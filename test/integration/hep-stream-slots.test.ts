/**
 * HEP stream slots against hostile clients (docs/ARCHITECTURE.md "HEP stream connections"): idle
 * time runs from the last complete valid HEP frame, so a byte trickle is closed; a frame must
 * complete within `frame_timeout_sec`; addresses that sent valid HEP keep a share of the slots and
 * may take the slot of a connection that never sent a frame. Real sockets on loopback, each
 * hostile host its own source address of 127.0.0.0/8; TLS runs the same listener code.
 */
import { describe, expect, test } from "bun:test";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";
import {
  type Client,
  connect,
  connectSeen,
  connectTls,
  counter,
  packet,
  seen,
  sendAndStore,
  stored,
} from "./hep-stream-helpers.ts";

const closedBy = (a: TestAppliance, transport: string, reason: string) =>
  counter(a, "svc_hep_connections_closed_total", `transport="${transport}",reason="${reason}"`);

/** Writes `bytes` one byte per `everyMs` on `c` (a slow-loris); returns the function that stops it. */
function trickle(c: Client, bytes: Uint8Array, everyMs: number): () => void {
  let i = 0;
  const t = setInterval(() => {
    if (i < bytes.length && !c.isClosed()) c.socket.write(bytes.subarray(i, ++i));
  }, everyMs);
  return () => clearInterval(t);
}

/**
 * `hosts` hostile source addresses 127.0.1.1.. opening `perHost` connections each, and waiting
 * until the server has accepted or refused every one. In order (each seen before the next) when
 * the test depends on which is oldest; else all at once.
 */
async function hostile(
  a: TestAppliance,
  port: number,
  hosts: number,
  perHost: number,
  opts: { transport?: "tcp" | "tls"; inOrder?: boolean } = {},
): Promise<Client[]> {
  const transport = opts.transport ?? "tcp";
  const from = Array.from({ length: hosts * perHost }, (_, i) => `127.0.1.${1 + Math.floor(i / perHost)}`);
  if (opts.inOrder) {
    const out: Client[] = [];
    for (const f of from) out.push(await connectSeen(a, port, f, transport));
    return out;
  }
  const before = seen(a, transport);
  const out = await Promise.all(from.map((f) => (transport === "tls" ? connectTls(port, f) : connect(port, f))));
  await waitFor(
    `the server saw all ${from.length} hostile connections`,
    () => seen(a, transport) === before + from.length,
  );
  return out;
}

/** Waits until svc_hep_connections_closed_total{transport, reason} is `n` (the ingest thread reports its counters every 100 ms). */
const closedCount = (a: TestAppliance, transport: string, reason: string, n: number) =>
  waitFor(`${n} closed with reason ${reason}`, () => closedBy(a, transport, reason) === n);

describe("HEP stream slots under hostile clients", () => {
  test("a connection trickling a byte every 100 ms is closed at idle_timeout_sec; one sending whole frames as slowly stays", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { tcp: { idle_timeout_sec: 1 } } } });
    const port = a.app.ingest!.listeners.tcp!.port();
    const loris = await connect(port, "127.0.0.2");
    const agent = await connect(port, "127.0.0.3");
    const stopLoris = trickle(loris, packet("loris"), 100);
    let n = 0;
    const frames = setInterval(() => agent.socket.write(packet(`steady-${n++}`)), 100);
    try {
      await waitFor("the trickling connection closed by the server", () => loris.isClosed());
      await closedCount(a, "tcp", "idle_timeout", 1);
      expect(agent.isClosed()).toBe(false);
      await waitFor("the steady agent's frames stored", () => stored(a, "steady-0"));
    } finally {
      stopLoris();
      clearInterval(frames);
      agent.socket.destroy();
    }
  });

  test("a frame not complete within frame_timeout_sec closes its connection, long before idle_timeout_sec", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { threads: 0, tcp: { idle_timeout_sec: 600, frame_timeout_sec: 0.3 } } },
    });
    const c = await connect(a.app.ingest!.listeners.tcp!.port(), "127.0.0.2");
    await sendAndStore(a, c, "before-slow-frame");
    const stop = trickle(c, packet("slow-frame"), 50);
    try {
      await waitFor("the connection with the slow frame closed by the server", () => c.isClosed());
      await closedCount(a, "tcp", "frame_timeout", 1);
      expect(closedBy(a, "tcp", "idle_timeout")).toBe(0);
    } finally {
      stop();
    }
  });

  test("40 hostile addresses take every slot they may; an agent that sent HEP before still connects and its messages are stored", async () => {
    await using dir = tempDir();
    // 48 slots, 2 per address: 40 addresses could hold 80. The default reserved share (25 %) keeps 12 for known addresses.
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { tcp: { max_connections: 48, max_connections_per_ip: 2 } } },
    });
    const port = a.app.ingest!.listeners.tcp!.port();
    const first = await connect(port, "127.0.0.200");
    await sendAndStore(a, first, "agent-before");
    const held = await hostile(a, port, 40, 2);
    const agent = await connect(port, "127.0.0.200");
    const ids = Array.from({ length: 20 }, (_, i) => `agent-under-attack-${i}`);
    for (const id of ids) agent.socket.write(packet(id));
    await waitFor("all 20 messages of the agent stored", async () =>
      (await Promise.all(ids.map((id) => stored(a, id)))).every(Boolean),
    );
    expect(agent.isClosed()).toBe(false);
    // The hostile hosts got the unreserved slots, no more: 35 beside the agent's first connection.
    await closedCount(a, "tcp", "reserved_for_known", 45);
    await waitFor("45 hostile connections closed, 35 held", () => held.filter((c) => c.isClosed()).length === 45);
    // A new address is kept out of the reserved share too.
    const stranger = await connectSeen(a, port, "127.0.0.201");
    await waitFor("the unknown address refused", () => stranger.isClosed());
    await closedCount(a, "tcp", "reserved_for_known", 46);
    for (const c of [first, agent, ...held]) c.socket.destroy();
  });

  test("a full table: a known agent takes the slot of the oldest connection that never sent a frame; the per-address cap still holds", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { tcp: { max_connections: 8, max_connections_per_ip: 2, reserved_for_known_percent: 0 } } },
    });
    const port = a.app.ingest!.listeners.tcp!.port();
    const first = await connect(port, "127.0.0.200");
    await sendAndStore(a, first, "known-first");
    const held = await hostile(a, port, 4, 2, { inOrder: true });
    // Seven got in beside the agent; the eighth found the table full.
    await waitFor("the eighth hostile connection refused", () => held[7]!.isClosed());
    await closedCount(a, "tcp", "max_connections", 1);
    const second = await connect(port, "127.0.0.200");
    await sendAndStore(a, second, "known-second");
    await waitFor("the oldest silent connection closed for the agent", () => held[0]!.isClosed());
    await closedCount(a, "tcp", "evicted_for_known", 1);
    expect(held.slice(1, 7).every((c) => !c.isClosed())).toBe(true);
    // A third connection from the agent's address is over its cap of 2: refused, nobody evicted.
    const third = await connectSeen(a, port, "127.0.0.200");
    await waitFor("the agent's third connection refused", () => third.isClosed());
    await closedCount(a, "tcp", "per_ip_limit", 1);
    await closedCount(a, "tcp", "evicted_for_known", 1);
    for (const c of [first, second, ...held]) c.socket.destroy();
  });

  test("the default per-address cap is 16: the 17th connection from one address is refused", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const port = a.app.ingest!.listeners.tcp!.port();
    const conns = await Promise.all(Array.from({ length: 17 }, () => connect(port, "127.0.0.2")));
    await waitFor("the server saw all 17 connections", () => seen(a, "tcp") === 17);
    await closedCount(a, "tcp", "per_ip_limit", 1);
    await waitFor("one connection refused", () => conns.filter((c) => c.isClosed()).length === 1);
    expect(counter(a, "svc_hep_connections_total", `transport="tcp"`)).toBe(16);
    for (const c of conns) c.socket.destroy();
  });

  peerTest("HEP over TLS: a byte trickle after the handshake is closed at idle_timeout_sec", [OPENSSL], async () => {
    await using dir = tempDir();
    const { cert, key } = selfSignedCert(dir.path);
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { tls: { cert, key }, tcp: { idle_timeout_sec: 1 } } },
    });
    const loris = await connectTls(a.app.ingest!.listeners.tls!.port(), "127.0.0.2");
    expect(loris.isClosed()).toBe(false);
    const stop = trickle(loris, packet("tls-loris"), 100);
    try {
      await waitFor("the trickling TLS connection closed by the server", () => loris.isClosed());
      await closedCount(a, "tls", "idle_timeout", 1);
    } finally {
      stop();
    }
  });

  peerTest(
    "HEP over TLS: an address known from TCP takes the slot of a silent TLS connection in a full table",
    [OPENSSL],
    async () => {
      await using dir = tempDir();
      const { cert, key } = selfSignedCert(dir.path);
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { tls: { cert, key }, tcp: { max_connections: 2, reserved_for_known_percent: 0 } } },
      });
      const tcpAgent = await connect(a.app.ingest!.listeners.tcp!.port(), "127.0.0.200");
      await sendAndStore(a, tcpAgent, "known-over-tcp");
      const port = a.app.ingest!.listeners.tls!.port();
      const held = await hostile(a, port, 2, 1, { transport: "tls", inOrder: true });
      const agent = await connectTls(port, "127.0.0.200");
      await sendAndStore(a, agent, "known-over-tls");
      await waitFor("the oldest silent TLS connection closed for the agent", () => held[0]!.isClosed());
      await closedCount(a, "tls", "evicted_for_known", 1);
      expect(held[1]!.isClosed()).toBe(false);
      for (const c of [tcpAgent, agent, ...held]) c.socket.destroy();
    },
  );
});
