/**
 * HEP over TCP/TLS connection slots (docs/ARCHITECTURE.md "HEP stream connections"): idle sockets
 * are closed after `ingest.hep.tcp.idle_timeout_sec`, and one source address gets at most
 * `ingest.hep.tcp.max_connections_per_ip` of the `max_connections` slots. Real sockets on
 * loopback; other source addresses come from 127.0.0.0/8 (every address of it is local on Linux).
 * Both listener placements run: on the ingest thread (the default) and on the main thread.
 */
import { describe, expect, test } from "bun:test";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";
import { connect, counter, packet, sendAndStore, stored } from "./hep-stream-helpers.ts";

describe("HEP stream connection limits", () => {
  test.each([1, 0])(
    "idle connections holding every slot are closed after idle_timeout_sec; then an agent connects and is stored (ingest.hep.threads = %d)",
    async (threads) => {
      await using dir = tempDir();
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { threads, tcp: { max_connections: 3, idle_timeout_sec: 1 } } },
      });
      const port = a.app.ingest!.listeners.tcp!.port();
      const idle = [
        await connect(port, "127.0.0.2"),
        await connect(port, "127.0.0.3"),
        await connect(port, "127.0.0.4"),
      ];
      await waitFor(
        "three connections accepted",
        () => counter(a, "svc_hep_connections_total", `transport="tcp"`) === 3,
      );
      // While they hold every slot, an agent is turned away (and counted).
      const early = await connect(port, "127.0.0.5");
      await waitFor("the agent turned away while every slot is held", () => early.isClosed());
      await waitFor(
        "refusal counted",
        () => counter(a, "svc_hep_connections_closed_total", `transport="tcp",reason="max_connections"`) === 1,
      );
      await waitFor("the idle connections closed by the server", () => idle.every((c) => c.isClosed()));
      await waitFor(
        "idle closes counted",
        () => counter(a, "svc_hep_connections_closed_total", `transport="tcp",reason="idle_timeout"`) === 3,
      );
      const agent = await connect(port, "127.0.0.5");
      await sendAndStore(a, agent, `after-idle-${threads}`);
      expect(agent.isClosed()).toBe(false);
      agent.socket.destroy();
    },
  );

  test.each([1, 0])(
    "max_connections_per_ip: the connection over the cap is closed and counted; other addresses still get in (ingest.hep.threads = %d)",
    async (threads) => {
      await using dir = tempDir();
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { threads, tcp: { max_connections_per_ip: 2 } } },
      });
      const port = a.app.ingest!.listeners.tcp!.port();
      const first = await connect(port, "127.0.0.2");
      const second = await connect(port, "127.0.0.2");
      await waitFor("two connections accepted", () => counter(a, "svc_hep_connections_total", `transport="tcp"`) === 2);
      const third = await connect(port, "127.0.0.2");
      await waitFor("the connection over the per-IP cap closed by the server", () => third.isClosed());
      await waitFor(
        "per-IP refusal counted",
        () => counter(a, "svc_hep_connections_closed_total", `transport="tcp",reason="per_ip_limit"`) === 1,
      );
      // The two within the cap keep working, and another host is not affected.
      const other = await connect(port, "127.0.0.3");
      await sendAndStore(a, first, `per-ip-first-${threads}`);
      await sendAndStore(a, second, `per-ip-second-${threads}`);
      await sendAndStore(a, other, `per-ip-other-${threads}`);
      // A slot given back by a close is free again for that address.
      first.socket.destroy();
      await first.closed;
      // (The server may see the close a moment after the client: a refused attempt is retried.)
      let attempt = 0;
      const again = await waitFor("a new connection from 127.0.0.2 accepted after one closed", async () => {
        const c = await connect(port, "127.0.0.2");
        const callId = `per-ip-again-${threads}-${attempt++}`;
        c.socket.write(packet(callId));
        const accepted = await Promise.race([
          c.closed.then(() => false),
          waitFor(`packet ${callId} stored`, () => stored(a, callId)).then(() => true),
        ]);
        return accepted ? c : undefined;
      });
      expect(again.isClosed()).toBe(false);
      for (const c of [second, other, again]) c.socket.destroy();
    },
  );

  peerTest(
    "HEP over TLS: a connection that never starts its handshake is closed after idle_timeout_sec",
    [OPENSSL],
    async () => {
      await using dir = tempDir();
      const { cert, key } = selfSignedCert(dir.path);
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { tls: { cert, key }, tcp: { idle_timeout_sec: 1 } } },
      });
      const silent = await connect(a.app.ingest!.listeners.tls!.port(), "127.0.0.2");
      await waitFor("the silent TLS connection closed by the server", () => silent.isClosed());
      await waitFor(
        "idle TLS close counted",
        () => counter(a, "svc_hep_connections_closed_total", `transport="tls",reason="idle_timeout"`) === 1,
      );
    },
  );
});
