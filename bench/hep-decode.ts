/**
 * HEP3 decode throughput on one core: a realistic INVITE with SDP (~870 octets of HEP3) built with
 * our encoder, decoded in a tight loop. Run: ./node_modules/.bin/bun bench/hep-decode.ts
 * Optional argument: seconds per measurement (default 2).
 */
import { decodeHep, encodeHep3, HEP_PROTO } from "../src/hep/index.ts";

const sdp = [
  "v=0",
  "o=alice 2890844526 2890844526 IN IP4 192.0.2.10",
  "s=-",
  "c=IN IP4 192.0.2.10",
  "t=0 0",
  "m=audio 49170 RTP/AVP 0 8 101",
  "a=rtpmap:0 PCMU/8000",
  "a=rtpmap:8 PCMA/8000",
  "a=rtpmap:101 telephone-event/8000",
  "a=fmtp:101 0-15",
  "a=ptime:20",
  "a=sendrecv",
  "",
].join("\r\n");

const invite = [
  "INVITE sip:bob@198.51.100.20:5060 SIP/2.0",
  "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport",
  "Max-Forwards: 70",
  "To: Bob <sip:bob@example.com>",
  "From: Alice <sip:alice@example.com>;tag=1928301774",
  "Call-ID: a84b4c76e66710@pc33.example.com",
  "CSeq: 314159 INVITE",
  "Contact: <sip:alice@192.0.2.10:5060>",
  "Allow: INVITE, ACK, CANCEL, OPTIONS, BYE, REFER, NOTIFY, MESSAGE, SUBSCRIBE, INFO",
  "Supported: replaces, timer",
  "User-Agent: svc-bench/1.0",
  "Content-Type: application/sdp",
  `Content-Length: ${sdp.length}`,
  "",
  sdp,
].join("\r\n");

const packet = encodeHep3({
  ipProtocol: 17,
  srcIp: "192.0.2.10",
  dstIp: "198.51.100.20",
  srcPort: 5060,
  dstPort: 5060,
  timestampUs: Date.now() * 1000,
  protoType: HEP_PROTO.SIP,
  captureId: 2001,
  authKey: "myHep",
  nodeName: "edge-proxy-1",
  payload: invite,
});

function measure(label: string, seconds: number, run: () => void): void {
  // Warm up so the JIT has compiled the decoder before timing.
  for (let i = 0; i < 200_000; i++) run();
  let n = 0;
  const start = Bun.nanoseconds();
  const deadline = start + seconds * 1e9;
  while (Bun.nanoseconds() < deadline) {
    for (let i = 0; i < 10_000; i++) run();
    n += 10_000;
  }
  const elapsed = (Bun.nanoseconds() - start) / 1e9;
  console.log(
    `${label}: ${Math.round(n / elapsed).toLocaleString("en-US")} msgs/s (${((elapsed / n) * 1e9).toFixed(0)} ns/msg)`,
  );
}

const seconds = Number(process.argv[2] ?? 2);
const nowMs = Date.now();
let sink = 0;
const first = decodeHep(packet, { nowMs });
if (!first.ok) throw new Error(`bench packet does not decode: ${first.reason}`);
console.log(`packet: ${packet.length} octets HEP3, payload ${first.value.payload.length} octets, Bun ${Bun.version}`);
measure("decodeHep (nowMs given)", seconds, () => {
  const r = decodeHep(packet, { nowMs });
  if (r.ok) sink += r.value.srcPort;
});
measure("decodeHep (no options)", seconds, () => {
  const r = decodeHep(packet);
  if (r.ok) sink += r.value.payload.length;
});
const ipv6Packet = encodeHep3({
  ...decodedFields(),
  ipFamily: 6,
  srcIp: "2001:db8::10",
  dstIp: "2001:db8:0:1::20",
  correlationId: "a84b4c76e66710@pc33.example.com",
});
measure("decodeHep IPv6 + correlation id", seconds, () => {
  const r = decodeHep(ipv6Packet, { nowMs });
  if (r.ok) sink += r.value.srcPort;
});
const gzipPacket = encodeHep3({ ...decodedFields(), payloadCompressed: true });
console.log(`gzip variant: ${gzipPacket.length} octets HEP3`);
measure("decodeHep gzip payload (inflate included)", seconds / 2, () => {
  const r = decodeHep(gzipPacket, { nowMs });
  if (r.ok) sink += r.value.payload.length;
});
if (sink === 42) console.log(sink);

function decodedFields() {
  const r = decodeHep(packet, { nowMs });
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}
