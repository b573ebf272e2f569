/**
 * sipp XML scenario files in loadgen (docs/LOADGEN.md "Scenario files"): sipp's own built-in
 * scenarios (dumped with `sipp -sd`) run by loadgen against sipp both ways, and a scenario of our
 * own with an injection file, optional receives, pause, nop jumps and labels.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { freeUdpPort, spawnPeer, waitUdpListening } from "../peers/process.ts";

const CALLS = 50;

function sippDump(dir: string, name: string): string {
  const out = Bun.spawnSync(["sipp", "-sd", name], { stdout: "pipe" });
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, out.stdout);
  return path;
}

describe("loadgen scenario files", () => {
  peerTest(
    "sipp's uac.xml run by loadgen against sipp -sn uas, and sipp -sn uac against loadgen running sipp's uas.xml",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-sf-");
      const port = await freeUdpPort();
      await using sippUas = spawnPeer(
        "sipp-uas",
        ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(sippUas, port);
      const uac = new Engine({
        opts: opts({
          scenario_file: sippDump(dir.path, "uac"),
          remote_addr: `127.0.0.1:${port}`,
          rate: 100,
          total_calls: CALLS,
        }),
        mode: "load",
      });
      await uac.start();
      await uac.done;
      expect(uac.snapshot().failed_reasons).toEqual({});
      expect(uac.snapshot().calls_successful).toBe(CALLS);
      expect(await sippUas.exited(20_000)).toBe(0);

      const uas = new Engine({
        opts: opts({ scenario_file: sippDump(dir.path, "uas"), local_port: 0, total_calls: CALLS }),
        mode: "management",
      });
      await uas.start();
      await using sippUac = spawnPeer(
        "sipp-uac",
        [
          "sipp",
          "-sn",
          "uac",
          "-i",
          "127.0.0.1",
          `127.0.0.1:${uas.binds[0]!.port}`,
          "-r",
          "100",
          "-m",
          String(CALLS),
          "-nostdin",
        ],
        { dir: dir.path },
      );
      const code = await sippUac.exited(30_000);
      await uas.done;
      expect(uas.snapshot().failed_reasons).toEqual({});
      expect(uas.snapshot().calls_successful).toBe(CALLS);
      expect(code).toBe(0);
    },
    60_000,
  );

  test("injection fields, optional recv, nop jump over a send, label, pause", async () => {
    await using dir = tempDir("svc-loadgen-sf-");
    const uas = await startUas();
    try {
      const csv = join(dir.path, "users.csv");
      writeFileSync(csv, "SEQUENTIAL\nalice;secret1\nbob;secret2\n");
      const scenario = join(dir.path, "options.xml");
      writeFileSync(
        scenario,
        `<?xml version="1.0"?>
<scenario name="options with users">
  <send retrans="500"><![CDATA[
    OPTIONS sip:[field0]@[remote_ip]:[remote_port] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: <sip:[field0]@[local_ip]>;tag=[call_number]
    To: <sip:[field0]@[remote_ip]>
    Call-ID: [call_id]
    CSeq: [cseq] OPTIONS
    Content-Length: [len]
  ]]></send>
  <recv response="100" optional="true"/>
  <recv response="200"/>
  <pause milliseconds="10"/>
  <nop next="end"/>
  <send><![CDATA[
    MESSAGE sip:never@[remote_ip] SIP/2.0
    Call-ID: [call_id]
    CSeq: 2 MESSAGE
  ]]></send>
  <label id="end"/>
</scenario>`,
      );
      const trace = join(dir.path, "trace.log");
      const uac = new Engine({
        opts: opts({
          scenario_file: scenario,
          injection_file: csv,
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          rate: 100,
          total_calls: 3,
          trace_msg: true,
          message_file: trace,
        }),
        mode: "load",
      });
      await uac.start();
      await uac.done;
      const s = uac.snapshot();
      expect(s.failed_reasons).toEqual({});
      expect(s.calls_successful).toBe(3);
      // done resolves after stop(), which flushes the message log.
      const log = readFileSync(trace, "utf8");
      expect([...log.matchAll(/^OPTIONS sip:(\w+)@/gm)].map((m) => m[1])).toEqual(["alice", "bob", "alice"]);
      expect(log).not.toContain("MESSAGE sip:never");
      expect(log.match(/^CSeq: 1 OPTIONS$/gm)).toHaveLength(6);
      expect(uas.snapshot().requests_answered).toBe(3);
    } finally {
      await uas.stop();
    }
  });
});
