/**
 * Scenario actions that act on the run rather than on one message (docs/LOADGEN.md "Scenario
 * actions and variables"): `rrs` keeping a Record-Route set for a later `[routes]`, a `jump` action,
 * `counter` statistics, `<log>`/`<warning>` in the message log and `exec int_cmd="stop_gracefully"`
 * ending an unlimited run. Both ends are loadgen engines running scenario files over loopback UDP.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { firstLine, headerOf, traced } from "./loadgen-trace.ts";
import { tempDir } from "../harness.ts";

const answer = (extra: string) => `<send><![CDATA[
    SIP/2.0 200 OK
    [last_Via:]
    [last_From:]
    [last_To:];tag=uas[call_number]
    [last_Call-ID:]
    [last_CSeq:]
    ${extra}
    Content-Length: 0
  ]]></send>`;

/** A server that record-routes its 200 to the INVITE, answers an in-dialog OPTIONS without, then BYE. */
const SERVER = `<?xml version="1.0"?>
<scenario name="record-routing server">
  <recv request="INVITE"/>
  ${answer("Record-Route: <sip:rr1.example;lr>\n    Record-Route: <sip:rr2.example;lr>\n    Contact: <sip:[local_ip]:[local_port]>")}
  <recv request="ACK"/>
  <recv request="OPTIONS"/>
  ${answer("")}
  <recv request="BYE"/>
  ${answer("")}
</scenario>`;

const request = (method: string, extra = "") => `<![CDATA[
    ${method} sip:[service]@[remote_ip]:[remote_port] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: <sip:lg@[local_ip]:[local_port]>;tag=uac[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
    Call-ID: [call_id]
    CSeq: [cseq] ${method}
    ${extra}
    Content-Length: 0
  ]]>`;

const CLIENT = `<?xml version="1.0"?>
<scenario name="rrs, jump, counters, stop_gracefully">
  <send retrans="500" counter="invites" start_rtd="invite">${request("INVITE")}</send>
  <recv response="200" rrs="true" counter="answered" rtd="invite"/>
  <send>${request("ACK")}</send>
  <send retrans="500">${request("OPTIONS")}</send>
  <recv response="200">
    <action><log message="options answered in [call_id]"/><warning message="just a warning"/></action>
  </recv>
  <nop><action><jump value="7"/></action></nop>
  <nop><action><error message="the jump was not taken"/></action></nop>
  <send retrans="500">${request("BYE", "[routes]")}</send>
  <recv response="200">
    <action><exec int_cmd="stop_gracefully"/></action>
  </recv>
</scenario>`;

describe("loadgen scenario actions on the run", () => {
  test("rrs keeps the 200's route set past a later answer, jump skips a step, counters count, stop_gracefully ends an unlimited run", async () => {
    await using dir = tempDir("svc-loadgen-act-");
    const serverFile = join(dir.path, "server.xml");
    const clientFile = join(dir.path, "client.xml");
    writeFileSync(serverFile, SERVER);
    writeFileSync(clientFile, CLIENT);
    const server = new Engine({ opts: opts({ scenario_file: serverFile, local_port: 0 }), mode: "management" });
    await server.start();
    try {
      const trace = join(dir.path, "trace.log");
      // total_calls 0 is unlimited: only the stop_gracefully action ends this run.
      const client = new Engine({
        opts: opts({
          scenario_file: clientFile,
          remote_addr: `127.0.0.1:${server.binds[0]!.port}`,
          rate: 5,
          total_calls: 0,
          trace_msg: true,
          message_file: trace,
          trace_logs: true,
          log_file: `${trace}.logs`,
        }),
        mode: "load",
      });
      await client.start();
      await client.done;
      const s = client.snapshot();
      expect(s.failed_reasons).toEqual({});
      expect(s.calls_successful).toBeGreaterThanOrEqual(1);
      expect(s.calls_successful).toBe(s.calls_created);
      expect(s.counters).toEqual({ invites: s.calls_created, answered: s.calls_created });
      expect(Object.keys(s.rtd)).toEqual(["invite"]);
      expect(s.rtd.invite!.count).toBe(s.calls_created);
      expect(s.rtd.invite!.avg_ms).toBeGreaterThanOrEqual(0);

      const byes = traced(trace).filter((m) => m.sent && firstLine(m.text).startsWith("BYE "));
      expect(byes.length).toBeGreaterThanOrEqual(1);
      // A UAC uses a response's Record-Route set reversed (RFC 3261 §12.1.2).
      for (const bye of byes) expect(headerOf(bye.text, "Route")).toBe("<sip:rr2.example;lr>, <sip:rr1.example;lr>");
      const log = readFileSync(`${trace}.logs`, "utf8");
      expect(log.match(/: \S+: options answered in \S+$/gm)).toHaveLength(s.calls_created);
      expect(log.match(/: \S+: Warning: just a warning$/gm)).toHaveLength(s.calls_created);
    } finally {
      await server.stop();
    }
  });

  test.each([
    [`<exec int_cmd="stop_call"/>`, 2, { stop_call: 2 }],
    [`<error message="no luck with [$v]"/>`, 2, { "error: no luck with abc": 2 }],
    // total_calls 0 is unlimited: stop_now ends the run at the first answer.
    [`<exec int_cmd="stop_now"/>`, 0, {}],
  ])("%s ends calls or the run", async (action, calls, reasons) => {
    await using dir = tempDir("svc-loadgen-act-");
    const clientFile = join(dir.path, "client.xml");
    writeFileSync(
      clientFile,
      `<?xml version="1.0"?><scenario name="ending"><send retrans="500">${request("OPTIONS")}</send><recv response="200"><action><assignstr assign_to="v" value="abc"/>${action}</action></recv><pause milliseconds="10"/></scenario>`,
    );
    const server = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0 }), mode: "management" });
    await server.start();
    try {
      const client = new Engine({
        opts: opts({
          scenario_file: clientFile,
          remote_addr: `127.0.0.1:${server.binds[0]!.port}`,
          rate: 100,
          total_calls: calls,
        }),
        mode: "load",
      });
      await client.start();
      await client.done;
      const s = client.snapshot();
      expect(s.failed_reasons).toEqual(reasons);
      expect(s.calls_successful).toBe(0);
    } finally {
      await server.stop();
    }
  });

  test("a jump loop that never waits fails the call instead of holding the engine", async () => {
    await using dir = tempDir("svc-loadgen-act-");
    const clientFile = join(dir.path, "loop.xml");
    writeFileSync(
      clientFile,
      `<?xml version="1.0"?><scenario name="loop"><send>${request("OPTIONS")}</send><nop><action><jump value="1"/></action></nop></scenario>`,
    );
    const server = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0 }), mode: "management" });
    await server.start();
    try {
      const client = new Engine({
        opts: opts({
          scenario_file: clientFile,
          remote_addr: `127.0.0.1:${server.binds[0]!.port}`,
          rate: 100,
          total_calls: 2,
        }),
        mode: "load",
      });
      await client.start();
      await client.done;
      expect(client.snapshot().failed_reasons).toEqual({ "loop without a wait": 2 });
    } finally {
      await server.stop();
    }
  });
});
