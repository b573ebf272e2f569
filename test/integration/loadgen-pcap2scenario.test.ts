/**
 * `loadgen pcap2scenario` (docs/LOADGEN.md "pcap2scenario"): a sipp call captured on lo with tshark
 * becomes a uac and a uas scenario, and each replays against sipp with every call successful.
 */
import { describe, expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine, runLoadgen } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { captureLo, LO_CAPTURE } from "../peers/capture.ts";
import { freeUdpPorts, spawnPeer, waitUdpListening } from "../peers/process.ts";

const CALLS = 20;

describe("pcap2scenario", () => {
  peerTest(
    "a captured sipp call replays as loadgen uac against sipp uas, and as loadgen uas under sipp uac",
    [PEERS.sipp, PEERS.tshark, LO_CAPTURE],
    async () => {
      await using dir = tempDir("svc-loadgen-p2s-");
      const [uasPort, uacPort, replayPort] = await freeUdpPorts(3);
      {
        await using capture = await captureLo(dir.path, "call", `udp port ${uasPort}`);
        await using uas = spawnPeer(
          "sipp-uas",
          ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(uasPort), "-m", "1", "-nostdin"],
          { dir: dir.path },
        );
        await waitUdpListening(uas, uasPort!);
        await using uac = spawnPeer(
          "sipp-uac",
          [
            "sipp",
            "-sn",
            "uac",
            "-i",
            "127.0.0.1",
            "-p",
            String(uacPort),
            `127.0.0.1:${uasPort}`,
            "-m",
            "1",
            "-nostdin",
          ],
          { dir: dir.path },
        );
        expect(await uac.exited(20_000)).toBe(0);
        await capture.finish();
      }
      const pcap = join(dir.path, "call.pcap");
      const out: string[] = [];
      const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(`ERR ${l}`) };
      const uacXml = join(dir.path, "uac.xml");
      expect(await runLoadgen(["pcap2scenario", pcap, "-role", "uac", "-o", uacXml], io)).toBe(0);
      expect(await runLoadgen(["pcap2scenario", pcap, "-role", "uas"], io)).toBe(0);
      const uasXml = join(dir.path, "uas.xml");
      writeFileSync(uasXml, out.join("\n"));
      expect(out.join("\n")).toContain('<recv request="INVITE"/>');

      // The uac scenario against a fresh sipp uas.
      await using target = spawnPeer(
        "sipp-target",
        ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(replayPort), "-m", String(CALLS), "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(target, replayPort!);
      const client = new Engine({
        opts: opts({ scenario_file: uacXml, remote_addr: `127.0.0.1:${replayPort}`, rate: 100, total_calls: CALLS }),
        mode: "load",
      });
      await client.start();
      await client.done;
      expect(client.snapshot().failed_reasons).toEqual({});
      expect(client.snapshot().calls_successful).toBe(CALLS);
      expect(await target.exited(20_000)).toBe(0);

      // The uas scenario under sipp uac.
      const server = new Engine({
        opts: opts({ scenario_file: uasXml, local_port: 0, total_calls: CALLS }),
        mode: "management",
      });
      await server.start();
      await using caller = spawnPeer(
        "sipp-caller",
        [
          "sipp",
          "-sn",
          "uac",
          "-i",
          "127.0.0.1",
          `127.0.0.1:${server.binds[0]!.port}`,
          "-r",
          "100",
          "-m",
          String(CALLS),
          "-nostdin",
        ],
        { dir: dir.path },
      );
      const code = await caller.exited(30_000);
      await server.done;
      expect(server.snapshot().failed_reasons).toEqual({});
      expect(server.snapshot().calls_successful).toBe(CALLS);
      expect(code).toBe(0);
    },
    90_000,
  );
});
