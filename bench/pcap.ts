/**
 * pcap throughput on one core: writing SIP rows as a pcap (export path), extracting SIP from that
 * file (import path, UDP), and extracting from the public corpus captures when present (mixed
 * UDP/TCP/WebSocket/SCTP plus RTP and other traffic to skip).
 * Run: ./node_modules/.bin/bun bench/pcap.ts [rows]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { extractSipMessages, PcapWriter, type PcapRecord } from "../src/pcap/index.ts";
import { corpusPath } from "../test/corpus.ts";

const rows = Number(process.argv[2] ?? 200_000);
const enc = new TextEncoder();
const payloads = [0, 1, 2, 3].map((i) =>
  enc.encode(
    `INVITE sip:+4930123456@pbx.example.net SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.101:5060;branch=z9hG4bK-${i}\r\nFrom: <sip:alice@example.com>;tag=${i}\r\n` +
      `To: <sip:+4930123456@pbx.example.net>\r\nCall-ID: bench-${i}@192.0.2.101\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: 120\r\n\r\n${"v=0\r\n".repeat(24)}`,
  ),
);
const records: PcapRecord[] = Array.from({ length: rows }, (_, i) => ({
  timestampUs: 1_700_000_000_000_000 + i * 100,
  srcIp: i % 4 === 3 ? "2001:db8::1" : "192.0.2.101",
  dstIp: i % 4 === 3 ? "2001:db8::2" : "198.51.100.7",
  srcPort: 5060,
  dstPort: 5060,
  payload: payloads[i % 4] as Uint8Array,
}));

const time = <T>(fn: () => T): [T, number] => {
  const t0 = performance.now();
  const r = fn();
  return [r, (performance.now() - t0) / 1000];
};

const [chunks, writeS] = time(() => {
  const w = new PcapWriter();
  const out = records.map((r) => w.add(r));
  out.push(w.finish());
  return out;
});
const file = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
chunks.reduce((off, c) => (file.set(c, off), off + c.length), 0);
console.log(
  `write   ${rows} rows in ${writeS.toFixed(3)} s: ${Math.round(rows / writeS)} rows/s, ${(file.length / writeS / 1e6).toFixed(0)} MB/s`,
);

const [extracted, readS] = time(() => extractSipMessages(file));
console.log(
  `extract ${extracted.messages.length} msgs in ${readS.toFixed(3)} s: ${Math.round(extracted.messages.length / readS)} msgs/s, ${(file.length / readS / 1e6).toFixed(0)} MB/s`,
);

const corpus = process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps");
if (existsSync(corpus)) {
  for (const name of readdirSync(corpus).filter((f) => f.endsWith(".pcap"))) {
    const bytes = new Uint8Array(readFileSync(join(corpus, name)));
    const reps = Math.max(1, Math.round(20e6 / bytes.length));
    const [r, s] = time(() => {
      let last = extractSipMessages(bytes);
      for (let i = 1; i < reps; i++) last = extractSipMessages(bytes);
      return last;
    });
    console.log(
      `corpus  ${name}: ${r.stats.frames} frames, ${r.messages.length} SIP; ${((bytes.length * reps) / s / 1e6).toFixed(0)} MB/s, ${Math.round(((r.stats.frames ?? 0) * reps) / s)} frames/s`,
    );
  }
}
