/**
 * `svc search --format callflow` against messages a real HEP agent sent: sngrep replays a pcap into
 * the appliance (HEPv3 over UDP with the frames' own times), the CLI draws the ladder, and its
 * arrows must be tshark's SIP messages of the same pcap, in tshark's order, with the same
 * endpoints and method / status code. Our own pcap always; the third-party corpus when present.
 */
import { describe, expect } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { corpusPath } from "../corpus.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { spawnPeer } from "../peers/process.ts";
import { expectedTable, settleStored, type SipTable, type StoredSip } from "../peers/stored-sip.ts";
import { sipGroundTruth, type WireSip } from "../peers/tshark-sip.ts";
import { cliEnv, parseLadder, runCli } from "./cli-harness.ts";

const PASSWORD = "cli-callflow-password";
const CORPUS_PCAP = join(process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps"), "sngrep_aaa.pcap");

const endpoint = (ip: string, port: number) => `${ip.includes(":") ? `[${ip}]` : ip}:${port}`;
const wireArrow = (w: WireSip) =>
  `${endpoint(w.srcIp, w.srcPort)} > ${endpoint(w.dstIp, w.dstPort)} ${w.method ?? w.statusCode}`;

/** sngrep sends every SIP message of `pcap` to the appliance; resolves with what was stored. */
async function replay(dir: string, a: TestAppliance, pcap: string, expected: number): Promise<StoredSip[]> {
  const rc = join(dir, "sngreprc");
  writeFileSync(rc, "set eep.send.id 2401\n");
  await using sngrep = spawnPeer(
    "sngrep",
    ["sngrep", "-N", "-q", "-I", pcap, "-H", `udp:127.0.0.1:${a.app.ingest!.listeners.udp!.port()}`],
    { dir, env: { SNGREPRC: rc, HOME: dir, TERM: "dumb" } },
  );
  expect({ sngrep: await sngrep.exited(20_000), output: sngrep.output() }).toEqual({ sngrep: 0, output: "" });
  return await settleStored(a.app.lake!, expected, 15_000);
}

/** The ladder's arrows as `src > dst METHOD|code`, in the order the CLI drew them. */
async function ladder(host: string, home: string, args: string[]): Promise<{ arrows: string[]; stdout: string }> {
  const r = await runCli(
    [
      "search",
      "--host",
      host,
      "--user",
      "admin",
      "--pass",
      PASSWORD,
      "--format",
      "callflow",
      "--limit",
      "50000",
      ...args,
    ],
    cliEnv(home, { COLUMNS: "400" }),
  );
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return {
    arrows: parseLadder(r.stdout).arrows.map(
      (x) => `${x.from} > ${x.to} ${x.label.replace(/ \(SDP\)| \[\d+\]$/g, "").split(" ")[0]}`,
    ),
    stdout: r.stdout,
  };
}

function fixturePcap(): { bytes: Uint8Array; callIds: string[] } {
  const run = crypto.randomUUID().slice(0, 8);
  const t0 = (Date.now() - 120_000) * 1000;
  const enc = new TextEncoder();
  const records: PcapRecord[] = [];
  const add = (src: [string, number], dst: [string, number], text: string, gapUs = 7_321) =>
    records.push({
      timestampUs: t0 + records.length * 10_000 + gapUs,
      srcIp: src[0],
      srcPort: src[1],
      dstIp: dst[0],
      dstPort: dst[1],
      payload: enc.encode(text),
    });
  const A: [string, number] = ["10.2.0.1", 5060];
  const B: [string, number] = ["10.2.0.2", 5060];
  const C: [string, number] = ["10.2.0.3", 5070];
  const D: [string, number] = ["2001:db8::d", 5060];
  const E: [string, number] = ["2001:db8::b", 5060];
  const x: CallParams = { callId: `flow-x-${run}@10.2.0.1`, from: "alice", to: "bob", fromTag: "fx", toTag: "tx" };
  const y: CallParams = { callId: `flow-y-${run}@10.2.0.2`, from: "alice", to: "bob", fromTag: "fy", toTag: "ty" };
  const z: CallParams = { callId: `flow-z-${run}@2001:db8::d`, from: "dave", to: "bob", fromTag: "fz", toTag: "tz" };
  add(A, B, invite({ ...x, srcIp: A[0] }));
  add(B, A, response(100, "Trying", "INVITE", x));
  add(B, C, invite({ ...y, srcIp: B[0], extraHeaders: [`X-CID: ${x.callId}`] }));
  add(C, B, response(100, "Trying", "INVITE", y));
  add(C, B, response(180, "Ringing", "INVITE", y));
  add(B, A, response(180, "Ringing", "INVITE", x));
  add(D, E, invite({ ...z, srcIp: D[0] }));
  add(E, D, response(403, "Forbidden", "INVITE", z));
  add(D, E, request("ACK", { ...z, cseq: 1 }));
  add(C, B, response(200, "OK", "INVITE", y));
  add(B, C, request("ACK", { ...y, cseq: 1 }));
  add(B, A, response(200, "OK", "INVITE", x));
  add(A, B, request("ACK", { ...x, cseq: 1 }));
  add(A, B, request("BYE", { ...x, cseq: 2 }));
  add(B, C, request("BYE", { ...y, cseq: 2 }));
  add(C, B, response(200, "OK", "BYE", { ...y, cseq: 2 }));
  add(B, A, response(200, "OK", "BYE", { ...x, cseq: 2 }));
  return { bytes: writePcap(records), callIds: [x.callId, y.callId, z.callId] };
}

describe("callflow against a real agent's HEP, ordered like tshark", () => {
  peerTest(
    "our own pcap: three calls, five endpoints (two IPv6), every arrow where tshark puts it",
    [PEERS.sngrep, PEERS.tshark],
    async () => {
      await using dir = tempDir("svc-cli-flow-");
      await using a = await startTestAppliance(dir.path, {
        coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      });
      const { bytes, callIds } = fixturePcap();
      const pcap = join(dir.path, "flow.pcap");
      writeFileSync(pcap, bytes);
      const wire = sipGroundTruth(pcap);
      const stored = await replay(dir.path, a, pcap, wire.length);
      expect(stored.length).toBe(wire.length);
      const host = a.app.coordinatorUrl!.replace("http://", "");
      const { arrows, stdout } = await ladder(host, dir.path, ["--from", "10m", "--call-id", callIds.join(";")]);
      expect(arrows).toEqual(wire.map(wireArrow));
      expect(arrows.length).toBe(17);
      expect(stdout).toContain("17 messages, 5 endpoints");
      expect(stdout).toContain(`Call-IDs: [1] ${callIds[0]}, [2] ${callIds[1]}, [3] ${callIds[2]}`);
      // One call alone: only its arrows, still in tshark's order.
      const one = await ladder(host, dir.path, ["--from", "10m", "--call-id", callIds[1]!]);
      expect(one.arrows).toEqual(wire.filter((w) => w.callId === callIds[1]).map(wireArrow));
    },
    60_000,
  );

  if (!existsSync(CORPUS_PCAP))
    console.warn(`skip: callflow corpus replay needs ${CORPUS_PCAP} (third-party capture, not in the repo)`);
  else {
    peerTest(
      "corpus sngrep_aaa.pcap (2005): per SIP table, the ladder is tshark's message order",
      [PEERS.sngrep, PEERS.tshark],
      async () => {
        await using dir = tempDir("svc-cli-flow-");
        await using a = await startTestAppliance(dir.path, {
          coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
          ingest: { hep: { max_age_days: 36500 } },
          storage: { lakehouse: { retention: { days: 0 } } },
        });
        const wire = sipGroundTruth(CORPUS_PCAP);
        const stored = await replay(dir.path, a, CORPUS_PCAP, wire.length);
        // What sngrep sent (it skips nothing UDP here, but compare only what is stored).
        const storedKeys = new Set(stored.map((s) => `${s.tsUs} ${s.srcIp}:${s.srcPort} ${s.dstIp}:${s.dstPort}`));
        const sentWire = wire.filter((w) =>
          storedKeys.has(`${w.timestampUs} ${w.srcIp}:${w.srcPort} ${w.dstIp}:${w.dstPort}`),
        );
        expect(sentWire.length).toBe(stored.length);
        const host = a.app.coordinatorUrl!.replace("http://", "");
        const years = ["--from", "2005-01-01", "--to", "2006-01-01"];
        let total = 0;
        for (const table of ["call", "registration", "default"] as SipTable[]) {
          const expected = sentWire.filter((w) => expectedTable(w.cseqMethod) === table).map(wireArrow);
          const { arrows } = await ladder(host, dir.path, [...years, "--event-type", table]);
          expect({ table, arrows }).toEqual({ table, arrows: expected });
          total += arrows.length;
        }
        console.info(
          `callflow corpus sngrep_aaa.pcap: ${total} arrows in tshark order over ${stored.length} stored messages`,
        );
        expect(total).toBe(stored.length);
      },
      90_000,
    );
  }
});
