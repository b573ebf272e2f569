/**
 * src/pcap against real captures and the real dissector:
 *  - every public corpus pcap (pcaps/ of the corpus test/corpus.ts finds; third-party data kept
 *    out of the repo, docs/STYLE.md "Tests")
 *    yields the SIP messages tshark found (its *.sip.tsv ground truth): same count and order, same
 *    frame numbers, µs timestamps, addresses, ports, method / status, Call-ID and CSeq;
 *  - the writer's files are dissected by tshark without malformed frames or bad checksums, and
 *    read back by our reader to the same records; corpus → extract → write → tshark keeps every
 *    message.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { extractSipMessages, writePcap, type CapturedSip, type PcapRecord } from "../../src/pcap/index.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { corpusPath } from "../corpus.ts";

const CORPUS = process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps");
const corpusPresent = existsSync(CORPUS);
if (!corpusPresent) console.warn(`skip: pcap corpus tests need ${CORPUS} (third-party captures, not in the repo)`);

const decoder = new TextDecoder();

/**
 * Method or status, Call-ID and CSeq from a message, deliberately tiny and independent of src/sip
 * (being written in parallel): start line (RFC 3261 §7.1/§7.2), Call-ID (or compact "i") and CSeq.
 */
function sipSummary(payload: Uint8Array): { method: string; status: string; callId: string; cseq: string } {
  const text = decoder.decode(payload);
  const headEnd = text.search(/\r?\n\r?\n/);
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const first = head.split(/\r?\n/, 1)[0] ?? "";
  const status = /^SIP\/2\.0 (\d{3})/i.exec(first)?.[1] ?? "";
  const method = status === "" ? (first.split(" ", 1)[0] ?? "") : "";
  const callId = /^(?:call-id|i)[ \t]*:[ \t]*(.*?)[ \t]*\r?$/im.exec(head)?.[1] ?? "";
  const cseq = (/^cseq[ \t]*:[ \t]*(.*?)[ \t]*\r?$/im.exec(head)?.[1] ?? "").replace(/[ \t]+/g, " ");
  return { method, status, callId, cseq };
}

/** tshark's "1105725482.965944000" as integer microseconds, without floating point. */
function epochToUs(epoch: string): number {
  const [sec = "0", frac = ""] = epoch.split(".");
  return Number(sec) * 1_000_000 + Number(frac.padEnd(6, "0").slice(0, 6));
}

/** With several occurrences tshark joins values with ","; IP-in-IP lists the outer header first. */
const innermost = (v: string) => v.split(",").at(-1) ?? "";

interface Expected {
  frame: number;
  timestampUs: number;
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  transport: "udp" | "tcp" | "sctp";
  /** One entry per SIP message tshark saw in the frame. */
  callIds: string[];
  cseqs: string[];
  methods: string[];
  statuses: string[];
}

function readGroundTruth(tsvPath: string): Expected[] {
  const [header = "", ...lines] = readFileSync(tsvPath, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const cols = header.split("\t");
  return lines.map((line) => {
    const cells = line.split("\t");
    const get = (name: string) => {
      const i = cols.indexOf(name);
      if (i < 0) throw new Error(`${tsvPath}: no column ${name}`);
      return cells[i] ?? "";
    };
    const transport = get("udp.srcport") !== "" ? "udp" : get("tcp.srcport") !== "" ? "tcp" : "sctp";
    const list = (name: string) => (get(name) === "" ? [] : get(name).split(","));
    return {
      frame: Number(get("frame.number")),
      timestampUs: epochToUs(get("frame.time_epoch")),
      src: innermost(get("ip.src") || get("ipv6.src")),
      dst: innermost(get("ip.dst") || get("ipv6.dst")),
      srcPort: Number(innermost(get(`${transport}.srcport`))),
      dstPort: Number(innermost(get(`${transport}.dstport`))),
      transport,
      callIds: list("sip.Call-ID"),
      cseqs: list("sip.CSeq"),
      methods: list("sip.Method"),
      statuses: list("sip.Status-Code"),
    };
  });
}

const corpusFiles = corpusPresent
  ? readdirSync(CORPUS).filter((f) => f.endsWith(".pcap") && existsSync(join(CORPUS, f.replace(/\.pcap$/, ".sip.tsv"))))
  : [];

/** Our messages grouped by frame, in the shape of a ground-truth row. */
function groupByFrame(messages: CapturedSip[]): Map<number, CapturedSip[]> {
  const byFrame = new Map<number, CapturedSip[]>();
  for (const m of messages) byFrame.set(m.frameNumber, [...(byFrame.get(m.frameNumber) ?? []), m]);
  return byFrame;
}

describe.skipIf(!corpusPresent)("pcap corpus vs tshark ground truth", () => {
  test("the corpus directory holds captures with ground truth", () => {
    expect(corpusFiles.length).toBeGreaterThan(0);
  });

  test.each(corpusFiles)("%s", (file) => {
    const expected = readGroundTruth(join(CORPUS, file.replace(/\.pcap$/, ".sip.tsv")));
    const result = extractSipMessages(new Uint8Array(readFileSync(join(CORPUS, file))));
    expect(result.error).toBeNull();
    const expectedCount = expected.reduce((n, e) => n + Math.max(1, e.callIds.length), 0);
    console.info(
      `${file}: ${result.messages.length} SIP messages, tshark ${expectedCount} (${expected.length} frames)`,
    );

    // Same frames in the same order, then per frame the same messages.
    const byFrame = groupByFrame(result.messages);
    expect([...byFrame.keys()]).toEqual(expected.map((e) => e.frame));
    expect(result.messages.length).toBe(expectedCount);
    for (const e of expected) {
      const ours = byFrame.get(e.frame) ?? [];
      const first = ours[0];
      // SIP over WebSocket is TCP for tshark's columns; we name it "ws".
      const transports = e.transport === "tcp" ? ["tcp", "ws"] : [e.transport];
      expect({
        frame: e.frame,
        ts: first?.timestampUs,
        src: first?.srcIp,
        dst: first?.dstIp,
        sp: first?.srcPort,
        dp: first?.dstPort,
        transportOk: transports.includes(first?.transport ?? ""),
      }).toEqual({
        frame: e.frame,
        ts: e.timestampUs,
        src: e.src,
        dst: e.dst,
        sp: e.srcPort,
        dp: e.dstPort,
        transportOk: true,
      });
      const summaries = ours.map((m) => sipSummary(m.payload));
      expect({ frame: e.frame, callIds: summaries.map((s) => s.callId), cseqs: summaries.map((s) => s.cseq) }).toEqual({
        frame: e.frame,
        callIds: e.callIds,
        cseqs: e.cseqs,
      });
      const sorted = (xs: string[]) => xs.filter((x) => x !== "").sort();
      expect({
        frame: e.frame,
        methods: sorted(summaries.map((s) => s.method)),
        statuses: sorted(summaries.map((s) => s.status)),
      }).toEqual({
        frame: e.frame,
        methods: sorted(e.methods),
        statuses: sorted(e.statuses),
      });
    }
  });

  test("SIP over WebSocket is recognised as such", () => {
    const file = corpusFiles.find((f) => f.includes("websocket"));
    if (file === undefined) return;
    const tcpRows = readGroundTruth(join(CORPUS, file.replace(/\.pcap$/, ".sip.tsv"))).filter(
      (e) => e.transport === "tcp",
    );
    const ws = extractSipMessages(new Uint8Array(readFileSync(join(CORPUS, file)))).messages.filter(
      (m) => m.transport === "ws",
    );
    expect(ws.map((m) => m.frameNumber)).toEqual(tcpRows.map((e) => e.frame));
  });
});

// ---- the writer against the real dissector ----

interface TsharkRow {
  frame: number;
  timestampUs: number;
  src: string;
  srcPort: number;
  callId: string;
  ipChecksum: string;
  udpChecksum: string;
  expert: string;
  malformed: string;
}

async function tsharkRows(path: string): Promise<TsharkRow[]> {
  const fields = [
    "frame.number",
    "frame.time_epoch",
    "ip.src",
    "ipv6.src",
    "udp.srcport",
    "sip.Call-ID",
    "ip.checksum.status",
    "udp.checksum.status",
    "_ws.expert.message",
    "_ws.malformed",
  ];
  const proc = Bun.spawn(
    [
      "tshark",
      "-r",
      path,
      "-o",
      "ip.check_checksum:TRUE",
      "-o",
      "udp.check_checksum:TRUE",
      "-T",
      "fields",
      "-E",
      "occurrence=a",
      "-E",
      "aggregator=|",
      ...fields.flatMap((f) => ["-e", f]),
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, err: err.replace(/^Running as user "root".*\n?/m, "") }).toEqual({ code: 0, err: "" });
  return out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const c = l.split("\t");
      return {
        frame: Number(c[0]),
        timestampUs: epochToUs(c[1] ?? ""),
        src: c[2] || c[3] || "",
        srcPort: Number(c[4]),
        callId: c[5] ?? "",
        ipChecksum: c[6] ?? "",
        udpChecksum: c[7] ?? "",
        expert: c[8] ?? "",
        malformed: c[9] ?? "",
      };
    });
}

const enc = new TextEncoder();
const sip = (callId: string, body = "") =>
  enc.encode(
    `MESSAGE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK-${callId}\r\nFrom: <sip:alice@example.com>;tag=a\r\nTo: <sip:bob@example.com>\r\nCall-ID: ${callId}\r\nCSeq: 1 MESSAGE\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );

const records: PcapRecord[] = [
  {
    timestampUs: 1_700_000_000_000_001,
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5080,
    dstPort: 5060,
    payload: sip("v4-small"),
  },
  {
    timestampUs: 1_700_000_000_500_000,
    srcIp: "2001:db8::1",
    dstIp: "2001:db8::2",
    srcPort: 5062,
    dstPort: 5060,
    payload: sip("v6-small"),
  },
  {
    timestampUs: 1_700_000_001_000_000,
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 0,
    dstPort: 5060,
    payload: sip("v4-3000", "x".repeat(3000)),
  },
  {
    timestampUs: 1_700_000_001_999_999,
    srcIp: "2001:db8::1",
    dstIp: "fe80::2",
    dstPort: 5060,
    payload: sip("v6-3000", "y".repeat(3000)),
  },
];

describe("pcap writer vs tshark", () => {
  peerTest(
    "tshark dissects every frame: no malformed frames, checksums good, same messages and times",
    [PEERS.tshark],
    async () => {
      await using dir = tempDir();
      const path = join(dir.path, "export.pcap");
      await Bun.write(path, writePcap(records));
      const rows = await tsharkRows(path);
      expect(
        rows.map((r) => ({ frame: r.frame, ts: r.timestampUs, src: r.src, sp: r.srcPort, callId: r.callId })),
      ).toEqual(
        records.map((r, i) => ({
          frame: i + 1,
          ts: r.timestampUs,
          src: r.srcIp,
          sp: r.srcPort || 5060,
          callId: decoder.decode(r.payload).match(/Call-ID: (\S+)/)?.[1] ?? "",
        })),
      );
      // Checksum status 1 = good (2 would be "unverified"); IPv6 has no header checksum.
      expect(rows.map((r) => [r.ipChecksum, r.udpChecksum, r.expert, r.malformed])).toEqual([
        ["1", "1", "", ""],
        ["", "1", "", ""],
        ["1", "1", "", ""],
        ["", "1", "", ""],
      ]);

      // The same check does fail on a damaged file: flip the first frame's UDP checksum.
      const damaged = writePcap(records);
      const udpChecksumAt = 24 + 16 + 14 + 20 + 6;
      damaged[udpChecksumAt] = (damaged[udpChecksumAt] ?? 0) ^ 0xff;
      await Bun.write(path, damaged);
      const bad = await tsharkRows(path);
      expect(bad[0]?.udpChecksum).toBe("0");
      expect(bad[0]?.expert).toContain("Bad checksum");

      // And our reader gets the records back.
      const back = extractSipMessages(writePcap(records)).messages;
      expect(
        back.map((m) => ({
          timestampUs: m.timestampUs,
          srcIp: m.srcIp,
          dstIp: m.dstIp,
          srcPort: m.srcPort,
          dstPort: m.dstPort,
          payload: m.payload,
        })),
      ).toEqual(
        records.map((r) => ({
          timestampUs: r.timestampUs,
          srcIp: r.srcIp,
          dstIp: r.dstIp,
          srcPort: r.srcPort || 5060,
          dstPort: r.dstPort || 5060,
          payload: r.payload,
        })),
      );
    },
    60_000,
  );
});

describe.skipIf(!corpusPresent)("corpus → extract → write → tshark", () => {
  peerTest(
    "every extracted corpus message is a SIP frame for tshark, in order, with its time and Call-ID",
    [PEERS.tshark],
    async () => {
      await using dir = tempDir();
      for (const file of corpusFiles) {
        const messages = extractSipMessages(new Uint8Array(readFileSync(join(CORPUS, file)))).messages;
        const path = join(dir.path, file);
        await Bun.write(path, writePcap(messages));
        const rows = await tsharkRows(path);
        expect({ file, rows: rows.map((r) => [r.timestampUs, r.callId, r.malformed]) }).toEqual({
          file,
          rows: messages.map((m) => [m.timestampUs, sipSummary(m.payload).callId, ""]),
        });
      }
    },
    120_000,
  );
});
