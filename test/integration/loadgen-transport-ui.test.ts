/**
 * Transport `ui` (docs/LOADGEN.md "Engine"): each call sends from the IP of its injection row
 * (`-ip_field`), checked on the wire with tshark on lo (the source address the kernel wrote, per
 * Call-ID, the addresses its messages advertise, and the answers going back to it), against Debian's sipp as UAS for the built-in `uac` and
 * a `-sf` scenario, against a loadgen UAS for `options` and `register`; the HEP mirror carries each
 * call's own source IP; an address the host does not have fails the start naming the IP and the line.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeHep } from "../../src/hep/index.ts";
import { Engine, runLoadgen } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { captureLo, LO_CAPTURE } from "../peers/capture.ts";
import { freeUdpPort, spawnPeer, waitUdpListening } from "../peers/process.ts";

const CALLS = 20;
const IPS = ["127.0.0.2", "127.0.0.3"];

interface WireCall {
  /** Source IPs of the call's messages to `port`, and the addresses they advertise (Via sent-by, Contact, SDP o= and c=). */
  from: Set<string>;
  advertised: Set<string>;
  /** Destination IPs of the answers from `port`. */
  answeredTo: Set<string>;
  fromUser: string;
}

const FIELDS = [
  "ip.src",
  "ip.dst",
  "udp.dstport",
  "sip.Call-ID",
  "sip.from.user",
  "sip.Via.sent-by.address",
  "sip.contact.host",
  "sdp.owner.address",
  "sdp.connection_info.address",
];

/** Per Call-ID, what tshark read off the wire for the messages to and from `port`. */
function wireByCall(pcap: string, port: number): Map<string, WireCall> {
  const args = [
    "tshark",
    "-n",
    "-r",
    pcap,
    "-Y",
    `sip && udp.port == ${port}`,
    "-T",
    "fields",
    "-E",
    "separator=|",
    ...FIELDS.flatMap((f) => ["-e", f]),
  ];
  const r = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`tshark -r failed: ${r.stderr.toString()}`);
  const calls = new Map<string, WireCall>();
  for (const line of r.stdout.toString().split("\n")) {
    if (line.trim() === "") continue;
    const [src, dst, dport, callId, fromUser, ...addresses] = line.split("|") as [
      string,
      string,
      string,
      string,
      string,
      ...string[],
    ];
    const c = calls.get(callId) ?? { from: new Set(), advertised: new Set(), answeredTo: new Set(), fromUser };
    if (Number(dport) === port) {
      c.from.add(src);
      for (const a of addresses.flatMap((x) => x.split(","))) if (a !== "") c.advertised.add(a);
    } else c.answeredTo.add(dst);
    calls.set(callId, c);
  }
  return calls;
}

/** Every call used exactly one source IP, got its answers there, and the IPs follow the rows. */
function expectOwnIpPerCall(calls: ReturnType<typeof wireByCall>, expected: number): Map<string, string> {
  expect(calls.size).toBe(expected);
  const ipOf = new Map<string, string>();
  for (const [callId, c] of calls) {
    expect([callId, [...c.from]]).toEqual([callId, [expect.stringMatching(/^127\.0\.0\.[23]$/)]]);
    expect([callId, [...c.answeredTo]]).toEqual([callId, [...c.from]]);
    expect([callId, [...c.advertised]]).toEqual([callId, [...c.from]]);
    ipOf.set(callId, [...c.from][0]!);
  }
  const counts = IPS.map((ip) => [...ipOf.values()].filter((v) => v === ip).length);
  expect(counts).toEqual([expected / 2, expected / 2]);
  return ipOf;
}

describe("loadgen -t ui", () => {
  peerTest(
    "built-in uac → sipp uas from two source IPs (-ip_field 1), answers back to each, HEP showing each call's IP",
    [PEERS.sipp, PEERS.tshark, LO_CAPTURE],
    async () => {
      await using dir = tempDir("svc-loadgen-ui-");
      const csv = join(dir.path, "users.csv");
      writeFileSync(csv, `SEQUENTIAL\nalice;${IPS[0]}\nbob;${IPS[1]}\n`);
      const port = await freeUdpPort();
      const hep: Array<{ srcIp: string; dstIp: string; text: string }> = [];
      const hepSock = await Bun.udpSocket({
        hostname: "127.0.0.1",
        socket: {
          data(_s, data) {
            const r = decodeHep(new Uint8Array(data));
            if (r.ok)
              hep.push({ srcIp: r.value.srcIp, dstIp: r.value.dstIp, text: new TextDecoder().decode(r.value.payload) });
          },
        },
      });
      const summary = join(dir.path, "summary.json");
      const out: string[] = [];
      let code: number;
      {
        await using capture = await captureLo(dir.path, "ui", `udp port ${port}`);
        await using sipp = spawnPeer(
          "sipp",
          ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
          { dir: dir.path },
        );
        await waitUdpListening(sipp, port);
        const argv = [
          "-sn",
          "uac",
          "-t",
          "ui",
          "-inf",
          csv,
          "-ip_field",
          "1",
          "-r",
          "50",
          "-m",
          String(CALLS),
          "-hep_addr",
          `127.0.0.1:${hepSock.port}`,
          "-summary_json",
          summary,
          `127.0.0.1:${port}`,
        ];
        code = await runLoadgen(argv, { out: (l) => out.push(l), err: (l) => out.push(`ERR ${l}`) });
        expect(await sipp.exited(20_000)).toBe(0);
        await capture.finish();
      }
      hepSock.close();
      expect(out[0]).toMatch(/load uac on udp 127\.0\.0\.2:\d+, udp 127\.0\.0\.3:\d+/);
      const s = JSON.parse(readFileSync(summary, "utf8"));
      expect([s.calls_successful, s.calls_failed, s.failed_reasons]).toEqual([CALLS, 0, {}]);
      expect(code).toBe(0);
      const ipOf = expectOwnIpPerCall(wireByCall(join(dir.path, "ui.pcap"), port), CALLS);
      // Call n reads row n: calls alternate between the two rows' IPs, and the Call-ID names its IP.
      for (const [callId, ip] of ipOf) expect(callId).toEndWith(`@${ip}`);
      // The mirror: every copy of a call's message has that call's IP on the loadgen side.
      const perCall = new Map<string, Set<string>>();
      for (const h of hep) {
        const callId = /^Call-ID: (.+)$/m.exec(h.text)?.[1]?.trim() ?? "";
        const local = h.dstIp === "127.0.0.1" ? h.srcIp : h.dstIp;
        perCall.set(callId, (perCall.get(callId) ?? new Set()).add(local));
      }
      expect(hep).toHaveLength(6 * CALLS);
      expect(new Map([...perCall].map(([id, ips]) => [id, [...ips]]))).toEqual(
        new Map([...ipOf].map(([id, ip]) => [id, [ip]])),
      );
    },
    60_000,
  );

  peerTest(
    "a -sf scenario: [local_ip] is the row's IP (field 0 by default), [field1] still fills in",
    [PEERS.sipp, PEERS.tshark, LO_CAPTURE],
    async () => {
      await using dir = tempDir("svc-loadgen-ui-sf-");
      // sipp's own uac.xml (`sipp -sd` exits 99 after the dump), with the From user taken from the injection row.
      const dump = Bun.spawnSync(["sipp", "-sd", "uac"], { stdout: "pipe", stderr: "pipe" });
      const xml = dump.stdout.toString().replace(/From: sipp <sip:sipp@/g, "From: [field1] <sip:[field1]@");
      expect(xml).toContain("From: [field1] <sip:[field1]@[local_ip]");
      const sf = join(dir.path, "uac.xml");
      writeFileSync(sf, xml);
      const csv = join(dir.path, "users.csv");
      writeFileSync(csv, `SEQUENTIAL\n${IPS[0]};alice\n${IPS[1]};bob\n`);
      const port = await freeUdpPort();
      let s: ReturnType<Engine["snapshot"]>;
      {
        await using capture = await captureLo(dir.path, "sf", `udp port ${port}`);
        await using sipp = spawnPeer(
          "sipp",
          ["sipp", "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", String(CALLS), "-nostdin"],
          { dir: dir.path },
        );
        await waitUdpListening(sipp, port);
        const engine = new Engine({
          opts: opts({
            scenario_file: sf,
            transport: "ui",
            injection_file: csv,
            remote_addr: `127.0.0.1:${port}`,
            rate: 50,
            total_calls: CALLS,
          }),
          mode: "load",
        });
        await engine.start();
        await engine.done;
        s = engine.snapshot();
        expect(await sipp.exited(20_000)).toBe(0);
        await capture.finish();
      }
      expect([s.calls_successful, s.calls_failed, s.failed_reasons]).toEqual([CALLS, 0, {}]);
      const calls = wireByCall(join(dir.path, "sf.pcap"), port);
      const ipOf = expectOwnIpPerCall(calls, CALLS);
      for (const [callId, ip] of ipOf)
        expect([callId, calls.get(callId)!.fromUser]).toEqual([callId, ip === IPS[0] ? "alice" : "bob"]);
    },
    60_000,
  );

  peerTest(
    "options and register from two source IPs against a loadgen UAS",
    [PEERS.tshark, LO_CAPTURE],
    async () => {
      await using dir = tempDir("svc-loadgen-ui-opt-");
      const csv = join(dir.path, "users.csv");
      writeFileSync(csv, `RANDOM\n${IPS[0]}\n${IPS[1]}\n`);
      const uas = await startUas();
      const port = uas.binds[0]!.port;
      try {
        await using capture = await captureLo(dir.path, "opt", `udp port ${port}`);
        for (const scenario_name of ["options", "register"]) {
          // RANDOM rows: which IP a call takes is random, so more calls make both IPs near certain (1 - 2·2^-40).
          const engine = new Engine({
            opts: opts({
              scenario_name,
              transport: "ui",
              injection_file: csv,
              remote_addr: `127.0.0.1:${port}`,
              rate: 200,
              total_calls: 40,
            }),
            mode: "load",
          });
          await engine.start();
          await engine.done;
          const s = engine.snapshot();
          expect([scenario_name, s.calls_successful, s.calls_failed]).toEqual([scenario_name, 40, 0]);
        }
        await capture.finish();
        const calls = wireByCall(join(dir.path, "opt.pcap"), port);
        expect(calls.size).toBe(80);
        const used = new Set<string>();
        for (const [callId, c] of calls) {
          expect([callId, [...c.answeredTo]]).toEqual([callId, [...c.from]]);
          expect([callId, [...c.advertised]]).toEqual([callId, [...c.from]]);
          expect(callId).toEndWith(`@${[...c.from][0]}`);
          used.add([...c.from][0]!);
        }
        expect([...used].sort()).toEqual(IPS);
      } finally {
        await uas.stop();
      }
    },
    60_000,
  );

  test("a profile alias with transport ui, a relative injection_file and ip_field runs from both addresses", async () => {
    await using dir = tempDir("svc-loadgen-ui-alias-");
    writeFileSync(join(dir.path, "users.csv"), `SEQUENTIAL\nalice;${IPS[0]}\nbob;${IPS[1]}\n`);
    const uas = await startUas();
    try {
      const alias = {
        transport: "ui",
        injection_file: "users.csv",
        ip_field: 1,
        scenario_name: "options",
        remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
        total_calls: 4,
        rate: 100,
      };
      writeFileSync(join(dir.path, "p.json"), JSON.stringify({ aliases: { ui: alias } }));
      const out: string[] = [];
      const code = await runLoadgen(["-config", join(dir.path, "p.json"), "-run-alias", "ui"], {
        out: (l) => out.push(l),
        err: (l) => out.push(`ERR ${l}`),
      });
      expect(out[0]).toMatch(/load options on udp 127\.0\.0\.2:\d+, udp 127\.0\.0\.3:\d+ → /);
      expect(code).toBe(0);
      expect(uas.snapshot().requests_answered).toBe(4);
    } finally {
      await uas.stop();
    }
  });

  test("an address the host does not have, or of the other IP version, fails the start: one line naming the IP and the row's line", async () => {
    await using dir = tempDir("svc-loadgen-ui-bad-");
    const csv = join(dir.path, "users.csv");
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never configured on a host.
    writeFileSync(csv, `SEQUENTIAL\n# caller;source\nalice;127.0.0.2\nbob;192.0.2.7\n`);
    const err: string[] = [];
    const code = await runLoadgen(["-sn", "uac", "-t", "ui", "-inf", csv, "-ipfield", "1", "-m", "1", "127.0.0.1:9"], {
      out: () => {},
      err: (l) => err.push(l),
    });
    expect(err).toEqual([
      `loadgen: -t ui cannot send from 192.0.2.7 (${csv} line 4, field 1): the address is not on this host`,
    ]);
    expect(code).toBe(2);
    // An IPv6 source cannot reach an IPv4 remote: refused at the start too, before a socket is bound.
    writeFileSync(csv, `SEQUENTIAL\n::1\n`);
    err.length = 0;
    const v6 = await runLoadgen(["-sn", "options", "-t", "ui", "-inf", csv, "-m", "1", "127.0.0.1:9"], {
      out: () => {},
      err: (l) => err.push(l),
    });
    expect(err).toEqual([
      `loadgen: -t ui cannot send from ::1 (${csv} line 2, field 0) to 127.0.0.1: not the same IP version`,
    ]);
    expect(v6).toBe(2);
  });
});
