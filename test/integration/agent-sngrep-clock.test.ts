/**
 * A real agent replaying an old capture: sngrep (`sngrep -N -q -I <pcap> -H udp:…`) sends each
 * SIP message of a pcap as HEP with the frame's original time, all in a moment. With the default
 * window (ingest.hep.max_age_days 3650) a capture from 2012 is outside it: the appliance shifts the
 * times of that source by one offset (docs/ARCHITECTURE.md "Agent clocks outside the accepted
 * window"), so the stored call keeps its 100 ms spacing and order and the rows are marked, where it
 * used to collapse onto the arrival times.
 */
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { spawnPeer } from "../peers/process.ts";
import { settleStored } from "../peers/stored-sip.ts";

peerTest(
  "sngrep replaying a 2012 pcap: stored times keep the 100 ms spacing and order, shifted and marked",
  [PEERS.sngrep],
  async () => {
    await using dir = tempDir("svc-sngrep-clock-");
    await using a = await startTestAppliance(dir.path, { storage: { lakehouse: { retention: { days: 0 } } } });
    const run = crypto.randomUUID().slice(0, 8);
    const call: CallParams = {
      callId: `sngrep-clock-${run}@10.3.0.1`,
      from: "alice",
      to: "bob",
      fromTag: "fa",
      toTag: "tb",
    };
    const A = ["10.3.0.1", 5060] as const;
    const B = ["10.3.0.2", 5060] as const;
    const msgs: Array<[readonly [string, number], readonly [string, number], string, string]> = [
      [A, B, invite({ ...call, srcIp: A[0] }), "INVITE"],
      [B, A, response(100, "Trying", "INVITE", call), "100"],
      [B, A, response(180, "Ringing", "INVITE", call), "180"],
      [B, A, response(200, "OK", "INVITE", call), "200"],
      [A, B, request("ACK", { ...call, cseq: 1 }), "ACK"],
      [A, B, request("BYE", { ...call, cseq: 2 }), "BYE"],
      [B, A, response(200, "OK", "BYE", { ...call, cseq: 2 }), "200"],
    ];
    const t0 = Date.UTC(2012, 0, 15, 8, 30, 0) * 1000 + 456;
    const enc = new TextEncoder();
    const records: PcapRecord[] = msgs.map(([src, dst, text], i) => ({
      timestampUs: t0 + i * 100_000,
      srcIp: src[0],
      srcPort: src[1],
      dstIp: dst[0],
      dstPort: dst[1],
      payload: enc.encode(text),
    }));
    const pcap = join(dir.path, "2012.pcap");
    writeFileSync(pcap, writePcap(records));
    const rc = join(dir.path, "sngreprc");
    writeFileSync(rc, "set eep.send.id 2304\n");
    const port = a.app.ingest!.listeners.udp!.port();
    const startedUs = Date.now() * 1000;
    await using sngrep = spawnPeer("sngrep", ["sngrep", "-N", "-q", "-I", pcap, "-H", `udp:127.0.0.1:${port}`], {
      dir: dir.path,
      env: { SNGREPRC: rc, HOME: dir.path, TERM: "dumb" },
    });
    expect({ sngrep: await sngrep.exited(20_000), output: sngrep.output() }).toEqual({ sngrep: 0, output: "" });
    const endedUs = Date.now() * 1000;
    const stored = (await settleStored(a.app.lake!, records.length, 15_000)).filter((s) => s.sessionId === call.callId);
    expect(stored.map((s) => s.event)).toEqual(msgs.map((m) => m[3]));
    const shift = stored[0]!.extra.time_shifted_us as number;
    expect(stored.map((s) => [s.extra.time_source, s.extra.ts_fallback, s.extra.time_shifted_us])).toEqual(
      stored.map(() => ["shifted", true, shift]),
    );
    // Spacing and order within a millisecond (exact: sngrep sends the frame time to the µs).
    stored.forEach((s, i) => expect(Math.abs(s.tsUs - (t0 + i * 100_000 + shift))).toBeLessThanOrEqual(1000));
    // The first message is anchored at its arrival, while sngrep ran.
    expect(stored[0]!.tsUs).toBeGreaterThanOrEqual(startedUs);
    expect(stored[0]!.tsUs).toBeLessThanOrEqual(endedUs);
    expect(stored.every((s) => s.date === new Date(s.tsUs / 1000).toISOString().slice(0, 10))).toBe(true);
  },
  60_000,
);
