/**
 * A real HEP agent: sngrep 1.6 (Debian 12, built with EEP/HEP) replaying a capture file with
 * `sngrep -N -q -I <pcap> -H udp:127.0.0.1:<port>` sends each SIP message as HEPv3 over UDP, with
 * the frame's ORIGINAL time (checked: chunk 0x0009/0x000a carry the pcap record time, not now).
 *
 * Ground truth is tshark on the same pcap. Every stored row must be a message tshark saw, with the
 * exact frame time, addresses, ports, Call-ID, method / status, CSeq, From / To user and tags,
 * User-Agent, request URI, table, protocol and payload; and the appliance must store exactly as many
 * rows as sngrep sent datagrams (counted by a second tshark on lo). Messages sngrep itself does not
 * send (it cannot read SCTP or IP-in-IP) are listed, not failed, for the third-party corpus.
 *
 * With 3 HEP ingest threads (docs/ARCHITECTURE.md "Several ingest threads") the datagrams of one
 * call are spread over the threads; the fixture test then also checks that every thread read some,
 * and (with 1 thread too) that each call's view (POST /api/v4/transactions/messages) lists its
 * messages in capture-time order and, where messages share a frame time (a burst in the fixture),
 * in the order sngrep sent them (the HEP datagrams' frame order on lo).
 *
 * Old captures: the corpus pcaps date from 2005 to 2026, while the appliance shifts agent times
 * older than `ingest.hep.max_age_days` (default 3650 days; docs/ARCHITECTURE.md "Agent clocks
 * outside the accepted window"). These tests set max_age_days to 36500 so the original times are
 * kept and can be compared exactly; test/integration/agent-sngrep-clock.test.ts covers the shift.
 */
import { describe, expect } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, register, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { LO_CAPTURE, captureLo } from "../peers/capture.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { callViews, sameTimePairs, sentOrder, type Sent, type ViewItem } from "../peers/call-view.ts";
import { hepDatagrams } from "../peers/hep-wire.ts";
import { metricFamily } from "../peers/metric-family.ts";
import { spawnPeer } from "../peers/process.ts";
import { compareWithWire, settleStored, summary, type Comparison, type StoredSip } from "../peers/stored-sip.ts";
import { sipGroundTruth, type WireSip } from "../peers/tshark-sip.ts";
import { corpusPath } from "../corpus.ts";

const CORPUS = process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps");
const corpusFiles = existsSync(CORPUS)
  ? readdirSync(CORPUS)
      .filter((f) => f.endsWith(".pcap"))
      .sort()
  : [];
if (corpusFiles.length === 0)
  console.warn(`skip: sngrep corpus replays need ${CORPUS} (third-party captures, not in the repo)`);

const PEERS_NEEDED = [PEERS.sngrep, PEERS.tshark, LO_CAPTURE];

/** The protocol column the appliance derives: Via transport for TLS / WS / WSS, else the IP protocol. */
function expectedProtocol(w: WireSip): string {
  const via = (w.viaTransport ?? "").toUpperCase();
  return via === "TLS" || via === "WS" || via === "WSS" ? via : w.transport.toUpperCase();
}

interface Replay {
  wire: WireSip[];
  /** HEP datagrams sngrep sent, per tshark on lo. */
  sent: number;
  /** Capture ids in those datagrams (chunk 0x000c as on the wire). */
  wireCaptureIds: Set<number | undefined>;
  stored: StoredSip[];
  c: Comparison;
  /** With `views`: each call's view as `label` strings, in the order returned. */
  views: Map<string, string[]>;
  /** Per Call-ID, what sngrep sent in HEP time order, then send order. */
  order: Map<string, Sent[]>;
  /** svc_hep_thread_packets_total per thread label. */
  threadPackets: Map<string, number>;
}

const VIEW_PASSWORD = "sngrep-view-password";

/** A message as "INVITE/1 INVITE 10.1.0.1:5060>10.1.0.2:5080": method or status, CSeq, who to whom. */
const label = (w: WireSip) =>
  `${w.method ?? w.statusCode}/${w.cseqSeq} ${w.cseqMethod} ${w.srcIp}:${w.srcPort}>${w.dstIp}:${w.dstPort}`;
const viewLabel = (m: ViewItem) =>
  `${m.event}/${String(m.data_extra?.cseq)} ${m.cseq_method} ${m.src_ip}:${m.src_port}>${m.dst_ip}:${m.dst_port}`;

/**
 * Replays `pcap` through sngrep into a fresh appliance with `threads` HEP ingest threads and
 * compares what was stored with tshark; with `views`, reads each call's view as well.
 */
async function replay(dir: string, pcap: string, captureId: number, threads = 1, views = false): Promise<Replay> {
  await using a = await startTestAppliance(dir, {
    ingest: { hep: { max_age_days: 36500, threads } },
    storage: { lakehouse: { retention: { days: 0 } } },
    coordinator: { auth: { admin_password_hash: sha256Hex(VIEW_PASSWORD) } },
  });
  const hepPort = a.app.ingest!.listeners.udp!.port();
  // sngrep reads $SNGREPRC (and $HOME/.sngreprc): only the capture id is ours to set.
  const rc = join(dir, "sngreprc");
  writeFileSync(rc, `set eep.send.id ${captureId}\n`);
  await using capture = await captureLo(dir, "sngrep-hep", `udp dst port ${hepPort}`);
  const startedUs = Date.now() * 1000;
  await using sngrep = spawnPeer("sngrep", ["sngrep", "-N", "-q", "-I", pcap, "-H", `udp:127.0.0.1:${hepPort}`], {
    dir,
    env: { SNGREPRC: rc, HOME: dir, TERM: "dumb" },
  });
  expect({ sngrep: await sngrep.exited(20_000), output: sngrep.output() }).toEqual({ sngrep: 0, output: "" });
  const datagrams = hepDatagrams(await capture.finish(), hepPort);
  const wireCaptureIds = new Set(datagrams.map((d) => d.captureId));
  const wire = sipGroundTruth(pcap);
  const stored = await settleStored(a.app.lake!, datagrams.length, 15_000);
  const nodeId = datagrams[0]?.captureId ?? -1;
  const c = compareWithWire(wire, stored, {
    nodeId,
    toleranceUs: 0,
    protocol: expectedProtocol,
    comparePayload: true,
    // Frame times beyond now + max_clock_skew_sec (default 1 day) are shifted per source.
    fallback: { afterUs: startedUs + 86_400_000_000, windowUs: [startedUs, Date.now() * 1000] },
  });
  const viewed = new Map<string, string[]>();
  if (views)
    for (const [id, items] of await callViews(`${a.app.coordinatorUrl}/api/v4`, VIEW_PASSWORD, wire))
      viewed.set(id, items.map(viewLabel));
  const threadPackets = metricFamily(a.app.metrics.render(), "svc_hep_thread_packets_total");
  return {
    wire,
    sent: datagrams.length,
    wireCaptureIds,
    stored,
    c,
    views: viewed,
    order: sentOrder(datagrams, wire),
    threadPackets,
  };
}

/** Our own messages (test/fixtures/sip.ts) as a pcap: IPv4 and IPv6, every SIP table, UTF-8, µs times, 2012. */
function fixturePcap(): { records: PcapRecord[]; bytes: Uint8Array } {
  const run = crypto.randomUUID().slice(0, 8);
  const t0 = (Date.now() - 60_000) * 1000;
  const enc = new TextEncoder();
  const records: PcapRecord[] = [];
  const add = (src: string, sport: number, dst: string, dport: number, text: string) =>
    records.push({
      timestampUs: t0 + records.length * 10_000 + 123,
      srcIp: src,
      srcPort: sport,
      dstIp: dst,
      dstPort: dport,
      payload: enc.encode(text),
    });
  const A = ["10.1.0.1", 5060] as const;
  const B = ["10.1.0.2", 5080] as const;
  const call: CallParams = {
    callId: `sngrep-call-${run}@10.1.0.1`,
    from: "alice",
    to: "bob",
    fromTag: "fa1",
    toTag: "tb1",
  };
  add(...A, ...B, invite({ ...call, extraHeaders: ["X-CID: sngrep-leg"] }));
  add(...B, ...A, response(100, "Trying", "INVITE", call));
  add(...B, ...A, response(180, "Ringing", "INVITE", call));
  add(...B, ...A, response(200, "OK", "INVITE", call));
  add(...A, ...B, request("ACK", { ...call, cseq: 1 }));
  add(...A, ...B, request("BYE", { ...call, cseq: 2 }));
  add(...B, ...A, response(200, "OK", "BYE", { ...call, cseq: 2 }));
  // A cancelled call whose caller has a UTF-8 display name.
  const cancelled: CallParams = {
    callId: `sngrep-cancel-${run}@10.1.0.1`,
    from: "zoe",
    to: "bob",
    fromTag: "fz1",
    toTag: "tb2",
  };
  add(...A, ...B, invite(cancelled).replace('"Alice \\"A\\""', '"Zoë Ærøskøbing"'));
  add(...B, ...A, response(100, "Trying", "INVITE", cancelled));
  add(...A, ...B, request("CANCEL", { ...cancelled, toTag: "", cseq: 1 }));
  add(...B, ...A, response(200, "OK", "CANCEL", { ...cancelled, cseq: 1 }));
  add(...B, ...A, response(487, "Request Terminated", "INVITE", cancelled));
  add(...A, ...B, request("ACK", { ...cancelled, cseq: 1 }));
  // Registration with a challenge, and an OPTIONS ping (default table).
  const reg = { callId: `sngrep-reg-${run}@10.1.0.9`, user: "carol" };
  add("10.1.0.9", 5062, ...B, register({ ...reg, cseq: 1 }));
  add(
    ...B,
    "10.1.0.9",
    5062,
    response(401, "Unauthorized", "REGISTER", {
      callId: reg.callId,
      from: "carol",
      to: "carol",
      fromTag: "reg-1",
      toTag: "r401",
      cseq: 1,
    }),
  );
  add("10.1.0.9", 5062, ...B, register({ ...reg, cseq: 2, expires: 600 }));
  add(
    ...B,
    "10.1.0.9",
    5062,
    response(200, "OK", "REGISTER", {
      callId: reg.callId,
      from: "carol",
      to: "carol",
      fromTag: "reg-1",
      toTag: "r200",
      cseq: 2,
    }),
  );
  const ping: CallParams = {
    callId: `sngrep-options-${run}@10.1.0.3`,
    from: "monitor",
    to: "bob",
    fromTag: "fm1",
    toTag: "tm1",
  };
  add("10.1.0.3", 5070, ...B, request("OPTIONS", { ...ping, toTag: "", cseq: 7 }));
  add(...B, "10.1.0.3", 5070, response(200, "OK", "OPTIONS", { ...ping, cseq: 7 }));
  // An IPv6 call that is busy.
  const v6: CallParams = {
    callId: `sngrep-v6-${run}@2001:db8::1`,
    from: "dave",
    to: "erin",
    fromTag: "fd1",
    toTag: "te1",
  };
  add("2001:db8::1", 5060, "2001:db8::2", 5060, invite({ ...v6, srcIp: "2001:db8::1" }));
  add("2001:db8::2", 5060, "2001:db8::1", 5060, response(486, "Busy Here", "INVITE", v6));
  add("2001:db8::1", 5060, "2001:db8::2", 5060, request("ACK", { ...v6, cseq: 1 }));
  // A burst: twelve INFOs and their 200s with one frame time, so only the order sngrep sent them
  // in (the rows' ids) orders the call's view, also when they are read by different threads.
  const burst: CallParams = {
    callId: `sngrep-burst-${run}@10.1.0.1`,
    from: "alice",
    to: "bob",
    fromTag: "fb1",
    toTag: "tb3",
  };
  const tBurst = t0 + records.length * 10_000 + 123;
  for (let k = 0; k < 12; k++) {
    records.push({
      timestampUs: tBurst,
      srcIp: A[0],
      srcPort: A[1],
      dstIp: B[0],
      dstPort: B[1],
      payload: enc.encode(request("INFO", { ...burst, cseq: 10 + k })),
    });
    records.push({
      timestampUs: tBurst,
      srcIp: B[0],
      srcPort: B[1],
      dstIp: A[0],
      dstPort: A[1],
      payload: enc.encode(response(200, "OK", "INFO", { ...burst, cseq: 10 + k })),
    });
  }
  // A keep-alive from 2012: older than the default max_age_days, kept as is with 36500.
  const old: CallParams = {
    callId: `sngrep-2012-${run}@10.1.0.4`,
    from: "legacy",
    to: "bob",
    fromTag: "fl1",
    toTag: "tl1",
  };
  const t2012 = Date.UTC(2012, 0, 15, 8, 30, 0) * 1000 + 456;
  records.push({
    timestampUs: t2012,
    srcIp: "10.1.0.4",
    srcPort: 5060,
    dstIp: B[0],
    dstPort: B[1],
    payload: enc.encode(request("OPTIONS", { ...old, toTag: "", cseq: 1 })),
  });
  records.push({
    timestampUs: t2012 + 1789,
    srcIp: B[0],
    srcPort: B[1],
    dstIp: "10.1.0.4",
    dstPort: 5060,
    payload: enc.encode(response(200, "OK", "OPTIONS", { ...old, cseq: 1 })),
  });
  return { records, bytes: writePcap(records) };
}

describe("real agent: sngrep -H replaying pcaps", () => {
  for (const threads of [1, 3]) {
    peerTest(
      `our own pcap, ${threads} ingest thread(s): every message stored once with the fields and exact frame time tshark sees, each call in order`,
      PEERS_NEEDED,
      async () => {
        await using dir = tempDir("svc-sngrep-");
        const { records, bytes } = fixturePcap();
        const pcap = join(dir.path, "fixture.pcap");
        writeFileSync(pcap, bytes);
        const r = await replay(dir.path, pcap, 2302, threads, true);
        const perThread = [...r.threadPackets].map(([k, n]) => `${k}=${n}`).join(" ");
        console.info(
          `${summary(`sngrep fixture.pcap, ${threads} thread(s)`, r.c)}; sngrep sent ${r.sent} HEP datagrams; same-time pairs ${sameTimePairs(r.order)}; per thread ${perThread}`,
        );
        expect(r.wire.length).toBe(records.length);
        expect(r.c.missing).toEqual([]);
        expect(r.c.unexpected).toEqual([]);
        expect(r.c.mismatches).toEqual([]);
        expect([r.sent, r.stored.length, r.c.matched, r.c.payloadsCompared, r.c.registrationsCompared]).toEqual([
          records.length,
          records.length,
          records.length,
          records.length,
          4,
        ]);
        expect(
          r.stored
            .filter((s) => s.sessionId?.startsWith("sngrep-2012-"))
            .map((s) => new Date(s.tsUs / 1000).getUTCFullYear()),
        ).toEqual([2012, 2012]);
        // X-CID is the default correlation header (ingest.sip.correlation_headers): only the INVITE has it.
        expect(r.stored.filter((s) => s.cid !== null).map((s) => [s.event, s.cid])).toEqual([["INVITE", "sngrep-leg"]]);
        // sngrep 1.6 writes htons(id) into the 32-bit capture id chunk, so 2302 arrives as 2302 << 16.
        // The appliance stores what is on the wire (compared per row above); this pins the quirk.
        expect([...r.wireCaptureIds]).toEqual([2302 * 65536]);
        // Every thread read some of the one UDP port (a random pick per datagram).
        expect(r.threadPackets.size).toBe(threads);
        for (const [thread, n] of r.threadPackets)
          expect({ thread, received: n > 0 }).toEqual({ thread, received: true });
        expect([...r.threadPackets.values()].reduce((x, y) => x + y, 0)).toBe(r.sent);
        // Each call's view: capture-time order, same-time messages (the burst) in the order sent.
        expect(sameTimePairs(r.order)).toBe(23);
        expect(r.views.size).toBe(4);
        for (const [id, view] of r.views)
          expect({ id, view }).toEqual({ id, view: (r.order.get(id) ?? []).map((s) => label(s.w)) });
      },
      60_000,
    );
  }

  for (const file of corpusFiles) {
    peerTest(
      `corpus ${file}: what sngrep sends is stored exactly as tshark reads the pcap`,
      PEERS_NEEDED,
      async () => {
        await using dir = tempDir("svc-sngrep-");
        const r = await replay(dir.path, join(CORPUS, file), 2303);
        console.info(`${summary(`sngrep ${file}`, r.c)}; sngrep sent ${r.sent} HEP datagrams`);
        for (const m of r.c.missing) console.info(`  not sent by sngrep: ${m}`);
        expect(r.c.unexpected).toEqual([]);
        expect(r.c.mismatches).toEqual([]);
        // Nothing sngrep sent was lost, and everything stored is a message tshark saw.
        expect([r.stored.length, r.c.matched]).toEqual([r.sent, r.sent]);
      },
      60_000,
    );
  }
});
