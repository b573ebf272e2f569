/**
 * loadgen against Debian's sipp (sip-tester), both ways over loopback UDP: loadgen UAC → sipp UAS
 * and sipp UAC → loadgen UAS, 1 000 calls at 100 calls/s (the acceptance run), zero failed on
 * either side (docs/LOADGEN.md "Verified against"). Rates beyond that are bench/loadgen/.
 */
import { describe, expect } from "bun:test";
import { Engine } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { freeUdpPort, spawnPeer, waitUdpListening } from "../peers/process.ts";

const CALLS = 1000;

/** sipp's final "Successful call" / "Failed call" cumulative counters from its screen dump. */
function sippCounters(output: string): { ok: number; failed: number } {
  const pick = (name: string) => {
    const all = [...output.matchAll(new RegExp(`${name}\\s*\\|\\s*\\d+\\s*\\|\\s*(\\d+)`, "g"))];
    return Number(all.at(-1)?.[1] ?? Number.NaN);
  };
  return { ok: pick("Successful call"), failed: pick("Failed call") };
}

describe("loadgen with sipp", () => {
  peerTest(
    "loadgen UAC → sipp UAS: every call completes",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-");
      const port = await freeUdpPort();
      await using sipp = spawnPeer(
        "sipp",
        ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(sipp, port);
      const engine = new Engine({
        opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${port}`, rate: 100, total_calls: CALLS }),
        mode: "load",
      });
      await engine.start();
      await engine.done;
      const s = engine.snapshot();
      expect(s.failed_reasons).toEqual({});
      expect(s.calls_successful).toBe(CALLS);
      expect(s.calls_failed).toBe(0);
      // uac: INVITE, ACK, BYE sent per call; 180, 200, 200 received.
      expect(s.messages_sent).toBeGreaterThanOrEqual(3 * CALLS);
      const code = await sipp.exited(30_000);
      expect(sippCounters(sipp.output())).toEqual({ ok: CALLS, failed: 0 });
      expect(code).toBe(0);
    },
    120_000,
  );

  peerTest(
    "sipp UAC → loadgen UAS: every call completes",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-");
      const engine = new Engine({
        opts: opts({ scenario_name: "uas", local_port: 0, total_calls: CALLS }),
        mode: "management",
      });
      await engine.start();
      const port = engine.binds[0]!.port;
      await using sipp = spawnPeer(
        "sipp",
        ["sipp", "-sn", "uac", "-i", "127.0.0.1", `127.0.0.1:${port}`, "-r", "100", "-m", String(CALLS), "-nostdin"],
        { dir: dir.path },
      );
      const code = await sipp.exited(60_000);
      await engine.done;
      const s = engine.snapshot();
      expect(s.failed_reasons).toEqual({});
      expect(s.calls_successful).toBe(CALLS);
      expect(sippCounters(sipp.output())).toEqual({ ok: CALLS, failed: 0 });
      expect(code).toBe(0);
    },
    120_000,
  );
});
