/**
 * loadgen's TLS transports (docs/LOADGEN.md "Transports") against a third-party TLS stack: Kamailio
 * 5.6 with its OpenSSL tls module as a record-routing proxy between a loadgen UAC (`l1`, `ln`) and a
 * loadgen UAS on a TLS listener, so both loadgen's TLS client and its TLS server meet OpenSSL
 * (Debian's sipp is built without TLS). The ACK and BYE follow the Record-Route through Kamailio and
 * reach the UAS over the TLS connection Kamailio opened for the INVITE, addressed by the UAS's
 * `;transport=tls` Contact. With -A WITH_AUTH, Kamailio challenges each INVITE (digest, RFC 2617).
 * A UAS scenario that hangs up has its BYE delivered on the caller's own TLS connection, and the
 * caller's SNI picks Kamailio's server_name domain (test/fixtures/kamailio/tls.cfg).
 */
import { describe, expect } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { KAMAILIO_TLS, renderKamailioConfig, startKamailio } from "../peers/kamailio.ts";
import { freePort, freeUdpPort } from "../peers/process.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";

const CALLS = 50;
const PASSWORD = "s3cret-over-tls";

/** Messages a sipp-layout trace (`-trace_msg`) received over TLS whose first line starts with `first`. */
function received(trace: string, first: string): string[] {
  return trace
    .split(/^-{20,} \S+\n/m)
    .filter((entry) => entry.startsWith("TLS message received from "))
    .map((entry) => entry.slice(entry.indexOf("\n\n") + 2))
    .filter((m) => m.startsWith(first));
}

/** Distinct source ports of the messages a trace received: one per TLS connection of the peer. */
const sourcePorts = (trace: string) =>
  new Set([...trace.matchAll(/^TLS message received from [\d.]+:(\d+):/gm)].map((m) => m[1])).size;

/** Kamailio's xlog lines of tls-proxy.cfg: how each request came in. */
const kamLines = (out: string, what: string) =>
  out.split("\n").filter((l) => l.includes(`loadgen-tls: ${what}`)).length;

/** 20 000 bytes: more than one TLS record (16 KiB at most, RFC 8446 §5.1) in each direction. */
const PAD = "x".repeat(20_000);

/** A caller whose INVITE carries PAD and that follows the Record-Route (rrs) for its ACK and BYE. */
const BIG_UAC = `<?xml version="1.0"?>
<scenario name="big INVITE over TLS">
  <send><![CDATA[
    INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    From: <sip:big@[local_ip]:[local_port]>;tag=big[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>
    Call-ID: [call_id]
    CSeq: 1 INVITE
    Contact: <sip:big@[local_ip]:[local_port];transport=tls>
    Max-Forwards: 70
    X-Pad: ${PAD}
    Content-Length: [len]
  ]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true"/>
  <send><![CDATA[
    ACK [next_url] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    [routes]
    From: <sip:big@[local_ip]:[local_port]>;tag=big[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
    Call-ID: [call_id]
    CSeq: 1 ACK
    Max-Forwards: 70
    Content-Length: 0
  ]]></send>
  <send><![CDATA[
    BYE [next_url] SIP/2.0
    Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
    [routes]
    From: <sip:big@[local_ip]:[local_port]>;tag=big[call_number]
    To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
    Call-ID: [call_id]
    CSeq: 2 BYE
    Max-Forwards: 70
    Content-Length: 0
  ]]></send>
  <recv response="200"/>
</scenario>`;

/** A UAS whose 200 echoes the INVITE's X-Pad back, so the big message crosses Kamailio both ways. */
const BIG_UAS = `<?xml version="1.0"?>
<scenario name="big 200 over TLS">
  <recv request="INVITE"/>
  <send><![CDATA[
    SIP/2.0 200 OK
    [last_Via:]
    [last_Record-Route:]
    [last_From:]
    [last_To:];tag=uas[call_number]
    [last_Call-ID:]
    [last_CSeq:]
    [last_X-Pad:]
    Contact: <sip:uas@[local_ip]:[local_port];transport=tls>
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

interface Run {
  transport: string;
  calls: number;
  /** -A switches of tls-proxy.cfg. */
  defines?: string[];
  client?: Partial<LoadgenOptions>;
  server?: Partial<LoadgenOptions>;
  /** How the UAC names Kamailio in -rsa (default 127.0.0.1). */
  remoteHost?: string;
  /** Runs while the UAC runs (after its start). */
  during?: (uac: Engine) => Promise<void>;
}

/** A self-signed certificate for `cn` in its own folder under `dir`. */
function certFor(dir: string, cn: string) {
  const sub = join(dir, cn);
  mkdirSync(sub);
  return selfSignedCert(sub, cn);
}

/** `calls` calls of a loadgen UAC through Kamailio to a loadgen UAS listening on TLS; both engines run to the end. */
async function throughKamailio({
  transport,
  calls,
  defines = [],
  client = {},
  server = {},
  remoteHost = "127.0.0.1",
  during,
}: Run) {
  await using dir = tempDir("svc-loadgen-tls-kam-");
  const { cert, key } = selfSignedCert(dir.path, "127.0.0.1");
  const byName = certFor(dir.path, "sni-localhost");
  const byIp = certFor(dir.path, "sni-ip-literal");
  const noSni = certFor(dir.path, "sni-none");
  const uasTrace = join(dir.path, "uas-messages.log");
  const uas = new Engine({
    opts: opts({
      scenario_name: "uas",
      total_calls: calls,
      ...server,
      trace_msg: true,
      message_file: uasTrace,
      listeners: [{ transport: "l1", local_ip: "127.0.0.1", local_port: 0, tls_cert: cert, tls_key: key }],
    }),
    mode: "management",
  });
  await uas.start();
  try {
    const [sipPort, tlsPort] = [await freeUdpPort(), freePort()];
    const tlsCfg = join(dir.path, "tls.cfg");
    const certs = {
      CERT: cert,
      KEY: key,
      SNI_NAME_CERT: byName.cert,
      SNI_NAME_KEY: byName.key,
      SNI_IP_CERT: byIp.cert,
      SNI_IP_KEY: byIp.key,
      SNI_NONE_CERT: noSni.cert,
      SNI_NONE_KEY: noSni.key,
    };
    writeFileSync(tlsCfg, renderKamailioConfig("tls.cfg", { ...certs, TLS_PORT: tlsPort }));
    const values = { SIP_PORT: sipPort, TLS_PORT: tlsPort, UAS_PORT: uas.binds[0]!.port, TLS_CFG: tlsCfg, PASSWORD };
    await using kam = await startKamailio(dir.path, "tls-proxy.cfg", values, defines);
    const uacTrace = join(dir.path, "uac-messages.log");
    const e = new Engine({
      opts: opts({
        scenario_name: "uac",
        transport,
        remote_addr: `${remoteHost}:${tlsPort}`,
        rate: 25,
        total_calls: calls,
        trace_msg: true,
        message_file: uacTrace,
        ...client,
      }),
      mode: "load",
    });
    await e.start();
    await during?.(e);
    await e.done;
    // Kamailio's log reaches us through a pipe: its last lines can still be in flight when the
    // caller is done. Every successful call's BYE passed Kamailio; wait for both of its lines.
    const settled = () => {
      const out = kam.output();
      return (
        kamLines(out, "BYE in over ") >= e.snapshot().calls_successful &&
        kamLines(out, "BYE in over tls") === kamLines(out, "BYE served with")
      );
    };
    await waitFor("Kamailio's log of every BYE", settled, 5_000).catch(() => undefined);
    // A caller that failed calls leaves the UAS waiting for calls that never come: stop it then.
    if (e.snapshot().calls_failed > 0) await uas.stop();
    await uas.done;
    if (e.snapshot().calls_failed > 0 || uas.snapshot().calls_failed > 0) {
      // A failure on a busy machine is hard to reproduce: say what both ends and Kamailio saw.
      const complaints = kam
        .output()
        .split("\n")
        .filter((l) => /ERROR|WARNING|CRITICAL|BUG/.test(l));
      console.error(
        `loadgen TLS through Kamailio (${transport}): UAC failed ${JSON.stringify(e.snapshot().failed_reasons)}, ` +
          `UAS failed ${JSON.stringify(uas.snapshot().failed_reasons)}; Kamailio's last complaints:\n` +
          complaints.slice(-15).join("\n"),
      );
    }
    return {
      uac: e.snapshot(),
      uas: uas.snapshot(),
      kam: kam.output(),
      uasTrace: readFileSync(uasTrace, "utf8"),
      uacTrace: readFileSync(uacTrace, "utf8"),
      tlsPort,
    };
  } finally {
    await uas.stop();
  }
}

describe("loadgen TLS through Kamailio's tls module", () => {
  for (const t of ["l1", "ln"]) {
    peerTest(
      `${t}: ${CALLS} calls loadgen UAC → Kamailio TLS → loadgen UAS TLS listener, zero failed`,
      [KAMAILIO_TLS, OPENSSL],
      async () => {
        const r = await throughKamailio({ transport: t, calls: CALLS });
        expect(r.uac.failed_reasons).toEqual({});
        expect([r.uac.calls_successful, r.uac.transport_errors]).toEqual([CALLS, 0]);
        expect(r.uas.failed_reasons).toEqual({});
        expect([r.uas.calls_successful, r.uas.transport_errors, r.uas.unexpected_messages]).toEqual([CALLS, 0, 0]);
        // Kamailio's own view: every INVITE, ACK and BYE came in over TLS, none over something else.
        for (const m of ["INVITE", "ACK", "BYE"]) expect(kamLines(r.kam, `${m} in over tls`)).toBe(CALLS);
        expect(kamLines(r.kam, "INVITE in over ") + kamLines(r.kam, "BYE in over ")).toBe(2 * CALLS);
        // Connected to an IP address, the UAC sends no SNI (RFC 6066 §3): the listener's domain for no SNI serves it.
        expect(kamLines(r.kam, "INVITE served with certificate sni-none")).toBe(CALLS);
        // The UAS got every request with Kamailio's TLS Via on top, and the UAC a Record-Route with transport=tls.
        const viaTls = new RegExp(`^Via: SIP/2\\.0/TLS 127\\.0\\.0\\.1:${r.tlsPort}\\b`, "im");
        for (const m of ["INVITE ", "ACK ", "BYE "]) {
          const got = received(r.uasTrace, m);
          expect(got.length).toBe(CALLS);
          expect(got.filter((x) => viaTls.test(x)).length).toBe(CALLS);
        }
        // Kamailio reused its TLS connection to the UAS listener for the ACKs and BYEs of every call
        // (by the Contact's address); the UAC used one (l1) or one per call (ln). Kamailio may open a
        // second one while its first handshake is still under way (seen once in about 20 ln runs).
        expect(sourcePorts(r.uasTrace)).toBeLessThanOrEqual(2);
        const kamSources = new Set(
          [...r.kam.matchAll(/loadgen-tls: INVITE in over tls from [\d.]+:(\d+)/g)].map((m) => m[1]),
        ).size;
        expect(kamSources).toBe(t === "l1" ? 1 : CALLS);
        const ok = received(r.uacTrace, "SIP/2.0 200 OK").filter((x) => /^CSeq: \d+ INVITE/im.test(x));
        expect(ok.length).toBe(CALLS);
        const rrTls = new RegExp(`^Record-Route: <sip:127\\.0\\.0\\.1:${r.tlsPort};transport=tls;lr[;>]`, "im");
        expect(ok.filter((x) => rrTls.test(x)).length).toBe(CALLS);
      },
      90_000,
    );
  }

  peerTest(
    "l1: digest authentication over TLS (Kamailio's auth module challenges each INVITE)",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      const r = await throughKamailio({
        transport: "l1",
        calls: 20,
        defines: ["WITH_AUTH"],
        client: { auth_username: "alice", auth_password: PASSWORD },
      });
      // One object, so that a failure shows every count at once. Each INVITE came twice over TLS:
      // without, then with credentials.
      expect({
        failed: r.uac.failed_reasons,
        successful: r.uac.calls_successful,
        challenges: r.uac.auth_challenges,
        uasSuccessful: r.uas.calls_successful,
        invitesOverTls: kamLines(r.kam, "INVITE in over tls"),
      }).toEqual({ failed: {}, successful: 20, challenges: 20, uasSuccessful: 20, invitesOverTls: 40 });
    },
    90_000,
  );

  peerTest(
    "l1: the UAS hangs up; Kamailio sends the BYE to the caller on the caller's own TLS connection",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      const calls = 20;
      // The caller would hang up only after 30 s; the UAS (uas-hangs-up.xml) does so 100 ms after the ACK.
      const r = await throughKamailio({
        transport: "l1",
        calls,
        client: { pause_ms: 30_000 },
        server: { scenario_file: join(import.meta.dir, "../fixtures/loadgen/uas-hangs-up.xml") },
      });
      expect(r.uas.failed_reasons).toEqual({});
      expect(r.uas.calls_successful).toBe(calls);
      expect(r.uac.failed_reasons).toEqual({});
      expect([r.uac.calls_successful, r.uac.transport_errors]).toEqual([calls, 0]);
      expect(kamLines(r.kam, "BYE in over tls")).toBe(calls);
      // The caller only connects, it listens nowhere: every BYE came over its one connection to Kamailio's TLS port.
      const byes = received(r.uacTrace, "BYE ");
      expect(byes.length).toBe(calls);
      expect(sourcePorts(r.uacTrace)).toBe(1);
      const viaTls = new RegExp(`^Via: SIP/2\\.0/TLS 127\\.0\\.0\\.1:${r.tlsPort}\\b`, "im");
      expect(byes.filter((x) => viaTls.test(x)).length).toBe(calls);
      expect(
        [...r.uacTrace.matchAll(/^TLS message received from 127\.0\.0\.1:(\d+):/gm)].every(
          (m) => Number(m[1]) === r.tlsPort,
        ),
      ).toBe(true);
    },
    90_000,
  );

  peerTest(
    "l1 and ln: the host name of -rsa goes out as SNI and picks Kamailio's server_name domain",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      for (const transport of ["l1", "ln"]) {
        const r = await throughKamailio({ transport, calls: 10, remoteHost: "localhost" });
        expect(r.uac.failed_reasons).toEqual({});
        expect(r.uac.calls_successful).toBe(10);
        expect(kamLines(r.kam, "INVITE served with certificate sni-localhost")).toBe(10);
        expect(kamLines(r.kam, "BYE served with certificate sni-localhost")).toBe(10);
      }
    },
    90_000,
  );

  peerTest(
    "l1: Kamailio closes the idle connection during a pause; the next call opens a new one",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      const r = await throughKamailio({
        transport: "l1",
        calls: 6,
        defines: ["WITH_SHORT_LIFETIME"],
        client: { users: 1, pause_ms: 10 },
        during: async (uac) => {
          await waitFor("three calls", () => uac.snapshot().calls_successful >= 3);
          uac.setPaused(true);
          await waitFor("the calls in progress done", () => uac.snapshot().calls_current === 0);
          await waitFor("Kamailio closing the idle connection", () => uac.legs[0]!.closed, 30_000);
          uac.setPaused(false);
        },
      });
      expect(r.uac.failed_reasons).toEqual({});
      expect(r.uac.calls_successful).toBe(6);
      expect(r.uas.calls_successful).toBe(6);
      // The calls after the pause came over a new connection from the caller: two connections, or
      // more when a stall of the machine let Kamailio close one between two calls as well.
      const sources = [...r.kam.matchAll(/loadgen-tls: INVITE in over tls from [\d.]+:(\d+)/g)].map((m) => m[1]);
      expect(sources.length).toBe(6);
      expect(new Set(sources).size).toBeGreaterThanOrEqual(2);
      expect(sources.at(-1)).not.toBe(sources[0]);
    },
    90_000,
  );

  peerTest(
    "l1: a call whose connection Kamailio closes fails at once with connection closed",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      // The caller would send its BYE after 60 s; Kamailio closes the idle connection long before.
      const r = await throughKamailio({
        transport: "l1",
        calls: 1,
        defines: ["WITH_SHORT_LIFETIME"],
        client: { pause_ms: 60_000 },
      });
      expect(r.uac.failed_reasons).toEqual({ "connection closed": 1 });
      expect(r.uac.calls_successful).toBe(0);
    },
    90_000,
  );

  peerTest(
    "l1: 20 000-byte messages span several TLS records both ways through Kamailio",
    [KAMAILIO_TLS, OPENSSL],
    async () => {
      await using files = tempDir("svc-loadgen-tls-big-");
      const uacXml = join(files.path, "uac-big.xml");
      const uasXml = join(files.path, "uas-big.xml");
      writeFileSync(uacXml, BIG_UAC);
      writeFileSync(uasXml, BIG_UAS);
      const calls = 10;
      const r = await throughKamailio({
        transport: "l1",
        calls,
        client: { scenario_file: uacXml },
        server: { scenario_file: uasXml },
      });
      expect(r.uac.failed_reasons).toEqual({});
      expect(r.uas.failed_reasons).toEqual({});
      expect([r.uac.calls_successful, r.uas.calls_successful, r.uac.transport_errors, r.uas.transport_errors]).toEqual([
        calls,
        calls,
        0,
        0,
      ]);
      const pad = (m: string) => m.includes(`\r\nX-Pad: ${PAD}\r\n`);
      expect(received(r.uasTrace, "INVITE ").filter(pad).length).toBe(calls);
      expect(received(r.uacTrace, "SIP/2.0 200 OK").filter(pad).length).toBe(calls);
    },
    90_000,
  );
});
