/**
 * sipp scenario actions and variables in loadgen (docs/LOADGEN.md "Scenario actions and
 * variables") against Debian sipp: sipp's own `regexp` scenario run by loadgen, a UAC scenario that
 * takes the To-tag and Contact of sipp's 200 into variables for its ACK and BYE (with a test/next
 * branch and a check_it that fails some calls), and loadgen as a UAS with actions and condexec
 * answering `sipp -sn uac`.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine, runLoadgen } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { firstLine, headerOf, traced } from "./loadgen-trace.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { freeUdpPort, spawnPeer, waitUdpListening } from "../peers/process.ts";

async function runUac(scenario: string, port: number, calls: number, trace: string): Promise<Engine> {
  const uac = new Engine({
    opts: opts({
      scenario_file: scenario,
      remote_addr: `127.0.0.1:${port}`,
      rate: 100,
      total_calls: calls,
      trace_msg: true,
      message_file: trace,
      trace_logs: true,
      log_file: `${trace}.logs`,
    }),
    mode: "load",
  });
  await uac.start();
  await uac.done;
  return uac;
}

const UAC_WITH_VARIABLES = `<?xml version="1.0"?>
<scenario name="variables from the 200">
  <send retrans="500"><![CDATA[
    INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: lg <sip:lg@[local_ip]:[local_port]>;tag=lg[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>
    Call-ID: [call_id]
    CSeq: [cseq] INVITE
    Contact: <sip:lg@[local_ip]:[local_port]>
    Content-Length: 0
  ]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200">
    <action>
      <ereg regexp=";tag=([^;>]+)" search_in="hdr" header="To:" check_it="true" assign_to="totag_param,totag"/>
      <ereg regexp="sip:([^;>]+)" search_in="hdr" header="Contact:" check_it="true" assign_to="contact_uri,contact"/>
      <assignstr assign_to="n" value="[call_number]"/>
      <log message="tag [$totag] contact [$contact]"/>
    </action>
  </recv>
  <nop test="contact" next="ack"/>
  <nop><action><error message="the test branch was not taken"/></action></nop>
  <label id="ack"/>
  <send><![CDATA[
    ACK sip:[$contact] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: lg <sip:lg@[local_ip]:[local_port]>;tag=lg[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>;tag=[$totag]
    Call-ID: [call_id]
    CSeq: [cseq] ACK
    Content-Length: 0
  ]]></send>
  <send retrans="500"><![CDATA[
    BYE sip:[$contact] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: lg <sip:lg@[local_ip]:[local_port]>;tag=lg[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>;tag=[$totag]
    Call-ID: [call_id]
    CSeq: [cseq] BYE
    Content-Length: 0
  ]]></send>
  <recv response="200">
    <action>
      <ereg regexp="[02468]$" search_in="var" variable="n" check_it="true" assign_to="even"/>
    </action>
  </recv>
</scenario>`;

const UAS_WITH_ACTIONS = `<?xml version="1.0"?>
<scenario name="uas with actions">
  <recv request="INVITE">
    <action>
      <ereg regexp="tag=([^;]+)" search_in="hdr" header="From:" check_it="true" assign_to="ft,fromtag"/>
      <ereg regexp="^ ([0-9]+)-" search_in="hdr" header="Call-ID:" check_it="true" assign_to="cn,callno"/>
      <todouble assign_to="n" variable="callno"/>
      <test assign_to="late" variable="n" compare="greater_than" value="2"/>
    </action>
  </recv>
  <send><![CDATA[
    SIP/2.0 100 Trying
    [last_Via:]
    [last_From:]
    [last_To:]
    [last_Call-ID:]
    [last_CSeq:]
    Content-Length: 0
  ]]></send>
  <send condexec="late"><![CDATA[
    SIP/2.0 180 Ringing
    [last_Via:]
    [last_From:]
    [last_To:];tag=lg[call_number]
    [last_Call-ID:]
    [last_CSeq:]
    Content-Length: 0
  ]]></send>
  <send retrans="500"><![CDATA[
    SIP/2.0 200 OK
    [last_Via:]
    [last_From:]
    [last_To:];tag=lg[call_number]
    [last_Call-ID:]
    [last_CSeq:]
    X-From-Tag: [$fromtag]
    X-Late: [$late]
    Contact: <sip:[local_ip]:[local_port];transport=[transport]>
    Content-Length: 0
  ]]></send>
  <recv request="ACK"/>
  <recv request="BYE"/>
  <send><![CDATA[
    SIP/2.0 200 OK
    [last_Via:]
    [last_From:]
    [last_To:]
    [last_Call-ID:]
    [last_CSeq:]
    Content-Length: 0
  ]]></send>
</scenario>`;

describe("loadgen scenario actions against sipp", () => {
  peerTest(
    "sipp's own regexp scenario (ereg with check_it and several assign_to) run by loadgen against sipp -sn uas",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-act-");
      const port = await freeUdpPort();
      await using sipp = spawnPeer(
        "sipp-uas",
        ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", "3", "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(sipp, port);
      const scenario = join(dir.path, "regexp.xml");
      writeFileSync(scenario, Bun.spawnSync(["sipp", "-sd", "regexp"], { stdout: "pipe" }).stdout);
      const trace = join(dir.path, "trace.log");
      const uac = await runUac(scenario, port, 3, trace);
      expect(uac.snapshot().failed_reasons).toEqual({});
      expect(uac.snapshot().calls_successful).toBe(3);
      // start_rtd="true" on the 200, rtd="true" on the BYE's 200: response-time timer 1, once per call.
      expect(uac.snapshot().rtd["1"]?.count).toBe(3);
      const acks = traced(trace).filter((m) => m.sent && firstLine(m.text).startsWith("ACK "));
      expect(acks).toHaveLength(3);
      for (const ack of acks) {
        // The first ip:port of sipp's 200 is its Via (loadgen's own address); then Contact <sip:127.0.0.1:port;transport=UDP>, o=user1 53655765 2353687637.
        expect(headerOf(ack.text, "retrievedIp")).toBe(`127.0.0.1:${uac.binds[0]!.port}`);
        expect(headerOf(ack.text, "retrievedContact")).toContain(`sip:127.0.0.1:${port}`);
        expect(headerOf(ack.text, "retrievedSdpOrigin")).toBe("o=user1 53655765 2353687637");
        expect(headerOf(ack.text, "retrievedSdpOrigin-version")).toBe("2353687637");
      }
      expect(await sipp.exited(20_000)).toBe(0);
    },
    60_000,
  );

  peerTest(
    "To-tag and Contact of sipp's 200 taken by ereg into the ACK and BYE, a test/next branch, check_it failing odd calls",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-act-");
      const port = await freeUdpPort();
      await using sipp = spawnPeer(
        "sipp-uas",
        ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", "4", "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(sipp, port);
      const scenario = join(dir.path, "vars.xml");
      writeFileSync(scenario, UAC_WITH_VARIABLES);
      const trace = join(dir.path, "trace.log");
      const uac = await runUac(scenario, port, 4, trace);
      const s = uac.snapshot();
      // Calls 1 and 3 end in the check_it miss after their dialog completed; sipp saw four whole calls.
      expect(s.failed_reasons).toEqual({ "regexp no match (assign_to even)": 2 });
      expect(s.calls_successful).toBe(2);
      expect(await sipp.exited(20_000)).toBe(0);

      const msgs = traced(trace);
      const tagOf200 = new Map<string, string>();
      for (const m of msgs)
        if (!m.sent && firstLine(m.text) === "SIP/2.0 200 OK" && headerOf(m.text, "CSeq").endsWith("INVITE"))
          tagOf200.set(headerOf(m.text, "Call-ID"), /;tag=([^;>]+)/.exec(headerOf(m.text, "To"))![1]!);
      expect(tagOf200.size).toBe(4);
      const inDialog = msgs.filter((m) => m.sent && /^(ACK|BYE) /.test(firstLine(m.text)));
      expect(inDialog).toHaveLength(8);
      for (const m of inDialog) {
        expect(headerOf(m.text, "To")).toEndWith(`;tag=${tagOf200.get(headerOf(m.text, "Call-ID"))}`);
        expect(firstLine(m.text)).toMatch(new RegExp(`^(ACK|BYE) sip:127\\.0\\.0\\.1:${port} SIP/2\\.0$`));
      }
      // -trace_logs: sipp's log-file lines (date, time, epoch: text), one per call.
      const logs = readFileSync(`${trace}.logs`, "utf8").match(
        /^\d{4}-\d\d-\d\d\t[\d:.]+\t[\d.]+: \S+: tag \S+ contact 127\.0\.0\.1:\d+$/gm,
      );
      expect(logs).toHaveLength(4);
    },
    60_000,
  );

  peerTest(
    "loadgen as UAS with ereg, todouble, test and condexec answers sipp -sn uac",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-act-");
      const scenario = join(dir.path, "uas-actions.xml");
      writeFileSync(scenario, UAS_WITH_ACTIONS);
      const trace = join(dir.path, "trace.log");
      const uas = new Engine({
        opts: opts({ scenario_file: scenario, local_port: 0, total_calls: 4, trace_msg: true, message_file: trace }),
        mode: "management",
      });
      await uas.start();
      await using sipp = spawnPeer(
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
          "4",
          "-d",
          "10",
          "-nostdin",
        ],
        { dir: dir.path },
      );
      const code = await sipp.exited(30_000);
      await uas.done;
      expect(uas.snapshot().failed_reasons).toEqual({});
      expect(uas.snapshot().calls_successful).toBe(4);
      expect(code).toBe(0);

      const msgs = traced(trace);
      const invites = msgs.filter((m) => !m.sent && firstLine(m.text).startsWith("INVITE "));
      expect(invites).toHaveLength(4);
      const fromTag = new Map(
        invites.map((m) => [headerOf(m.text, "Call-ID"), /tag=([^;]+)/.exec(headerOf(m.text, "From"))![1]!]),
      );
      const oks = msgs.filter(
        (m) => m.sent && firstLine(m.text) === "SIP/2.0 200 OK" && headerOf(m.text, "CSeq").endsWith("INVITE"),
      );
      // Deduplicated by Call-ID: a 200 may be retransmitted before its ACK arrives.
      const byCall = new Map(oks.map((m) => [headerOf(m.text, "Call-ID"), m.text]));
      expect(byCall.size).toBe(4);
      for (const [callId, text] of byCall) {
        expect(headerOf(text, "X-From-Tag")).toBe(fromTag.get(callId)!);
        expect(headerOf(text, "X-Late")).toBe(Number(callId.split("-")[0]) > 2 ? "true" : "false");
      }
      // condexec: only calls 3 and 4 (sipp's Call-ID starts with the call number) ring.
      const rang = new Set(
        msgs
          .filter((m) => m.sent && firstLine(m.text) === "SIP/2.0 180 Ringing")
          .map((m) => headerOf(m.text, "Call-ID").split("-")[0]),
      );
      expect([...rang].sort()).toEqual(["3", "4"]);
    },
    60_000,
  );

  peerTest(
    "sipp's branchc and branchs (ereg, test/next branches, optional recv with next) both ways: loadgen branchc against sipp -sn branchs, sipp -sn branchc against loadgen branchs",
    [PEERS.sipp],
    async () => {
      await using dir = tempDir("svc-loadgen-act-");
      const dump = (name: string) => {
        const path = join(dir.path, `${name}.xml`);
        writeFileSync(path, Bun.spawnSync(["sipp", "-sd", name], { stdout: "pipe" }).stdout);
        return path;
      };
      // branchs sends 180 to every INVITE; its test="3" (From matched "ua2") jumps over the 403 to 100
      // and 200 for call 2 (From ua2); call 1 (From ua1) gets the 403 and branchc's next jumps to its BYE.
      const CALLS = 2;
      const port = await freeUdpPort();
      await using sippServer = spawnPeer(
        "sipp-branchs",
        ["sipp", "-sn", "branchs", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
        { dir: dir.path },
      );
      await waitUdpListening(sippServer, port);
      const clientTrace = join(dir.path, "client.log");
      const client = runUac(dump("branchc"), port, CALLS, clientTrace);

      const serverTrace = join(dir.path, "server.log");
      const server = new Engine({
        opts: opts({
          scenario_file: dump("branchs"),
          local_port: 0,
          total_calls: CALLS,
          trace_msg: true,
          message_file: serverTrace,
        }),
        mode: "management",
      });
      await server.start();
      await using sippClient = spawnPeer(
        "sipp-branchc",
        [
          "sipp",
          "-sn",
          "branchc",
          "-i",
          "127.0.0.1",
          `127.0.0.1:${server.binds[0]!.port}`,
          "-m",
          String(CALLS),
          "-nostdin",
        ],
        { dir: dir.path },
      );

      const uac = await client;
      expect(uac.snapshot().failed_reasons).toEqual({});
      expect(uac.snapshot().calls_successful).toBe(CALLS);
      expect(await sippServer.exited(30_000)).toBe(0);
      // Call numbers (sipp's Call-ID starts with it) answered with each status, once each even when repeated.
      const received = traced(clientTrace).filter((m) => !m.sent);
      const calls = (line: string) =>
        [
          ...new Set(
            received.filter((m) => firstLine(m.text) === line).map((m) => headerOf(m.text, "Call-ID").split("-")[0]),
          ),
        ].sort();
      expect(calls("SIP/2.0 180 Ringing")).toEqual(["1", "2"]);
      expect(calls("SIP/2.0 403 Error")).toEqual(["1"]);
      expect(calls("SIP/2.0 100 Trying")).toEqual(["2"]);

      expect(await sippClient.exited(30_000)).toBe(0);
      await server.done;
      expect(server.snapshot().failed_reasons).toEqual({});
      expect(server.snapshot().calls_successful).toBe(CALLS);
      const sent = traced(serverTrace).filter((m) => m.sent);
      const by = (line: string) =>
        sent.filter((m) => firstLine(m.text) === line).map((m) => /^From: ua(\d+)/m.exec(m.text)?.[1]);
      expect(by("SIP/2.0 180 Ringing").sort()).toEqual(["1", "2"]);
      expect(by("SIP/2.0 403 Error")).toEqual(["1"]);
      expect(by("SIP/2.0 100 Trying")).toEqual(["2"]);
    },
    90_000,
  );

  test("a scenario reading a variable nothing assigns, or running a shell command, is refused before a call starts", async () => {
    await using dir = tempDir("svc-loadgen-act-");
    const unassigned = join(dir.path, "unassigned.xml");
    writeFileSync(unassigned, UAC_WITH_VARIABLES.replace("tag=[$totag]", "tag=[$to_tag]"));
    expect(
      () => new Engine({ opts: opts({ scenario_file: unassigned, remote_addr: "127.0.0.1:5060" }), mode: "load" }),
    ).toThrow(/variable \$to_tag is used but never assigned/);
    const shell = join(dir.path, "shell.xml");
    writeFileSync(
      shell,
      UAC_WITH_VARIABLES.replace('<assignstr assign_to="n"', '<exec command="touch /tmp/x"/><assignstr assign_to="n"'),
    );
    expect(
      () => new Engine({ opts: opts({ scenario_file: shell, remote_addr: "127.0.0.1:5060" }), mode: "load" }),
    ).toThrow(/no shell commands/);
    // The command line: an exit code and one line on stderr naming the file and the element.
    const out: string[] = [];
    const err: string[] = [];
    const code = await runLoadgen(["-sf", shell, "127.0.0.1:5060", "-m", "1"], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    expect(err).toHaveLength(1);
    expect(err[0]).toContain(`${shell}: <exec command="…"> is refused`);
    expect(code).not.toBe(0);
  });
});
