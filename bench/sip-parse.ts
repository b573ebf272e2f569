/**
 * SIP parse throughput on one core: a realistic INVITE with SDP (~800 bytes), as the ingest hot
 * path sees it. Run: ./node_modules/.bin/bun bench/sip-parse.ts [seconds-per-case]
 * Target (task brief): >= 400k parses/s for the INVITE.
 */
import { parseSdp, parseSip, sipBody, type SipParseOptions } from "../src/sip/index.ts";

const crlf = (lines: string[]): Uint8Array => new TextEncoder().encode(lines.join("\r\n"));

const sdp = [
  "v=0",
  "o=alice 2890844526 2890844526 IN IP4 192.0.2.101",
  "s=-",
  "c=IN IP4 192.0.2.101",
  "t=0 0",
  "m=audio 49172 RTP/AVP 0 8 101",
  "a=rtpmap:0 PCMU/8000",
  "a=rtpmap:8 PCMA/8000",
  "a=rtpmap:101 telephone-event/8000",
  "a=sendrecv",
  "",
].join("\r\n");

const invite = crlf([
  "INVITE sip:+4930123456@pbx.example.net:5060;user=phone SIP/2.0",
  "Via: SIP/2.0/UDP 192.0.2.101:5060;branch=z9hG4bK-524287-1---a1b2c3d4e5f60718;rport",
  "Max-Forwards: 70",
  'From: "Alice Example" <sip:alice@example.com>;tag=8a7f3c21',
  "To: <sip:+4930123456@pbx.example.net;user=phone>",
  "Call-ID: a84b4c76e66710-c3f2a1@192.0.2.101",
  "CSeq: 314159 INVITE",
  "Contact: <sip:alice@192.0.2.101:5060;transport=udp>",
  "Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO",
  "Supported: replaces, timer",
  "User-Agent: Acme SoftPhone 5.4.2",
  "P-Asserted-Identity: <sip:alice@example.com>",
  "X-CID: 7f1d2e3c-9a8b",
  "Content-Type: application/sdp",
  `Content-Length: ${new TextEncoder().encode(sdp).length}`,
  "",
  sdp,
]);

const ok200 = crlf([
  "SIP/2.0 200 OK",
  "Via: SIP/2.0/UDP 192.0.2.101:5060;branch=z9hG4bK-524287-1---a1b2c3d4e5f60718;rport=5060;received=192.0.2.101",
  'From: "Alice Example" <sip:alice@example.com>;tag=8a7f3c21',
  "To: <sip:+4930123456@pbx.example.net;user=phone>;tag=as58f4201b",
  "Call-ID: a84b4c76e66710-c3f2a1@192.0.2.101",
  "CSeq: 314159 INVITE",
  "Server: Acme PBX 18.2",
  "Content-Length: 0",
  "",
  "",
]);

const opts: SipParseOptions = { customHeaders: ["X-CID", "P-Charging-Vector"], correlationHeaders: ["X-CID"] };

/**
 * Runs `run` in rounds of ~0.1 s for `seconds` and reports the best round, by process CPU time
 * (immune to being descheduled on a shared machine) and by wall time.
 */
function measure(name: string, seconds: number, run: () => unknown): void {
  for (let i = 0; i < 50_000; i++) run(); // warm-up so the JIT has compiled the path
  let bestCpu = Infinity;
  let bestWall = Infinity;
  const until = Bun.nanoseconds() + seconds * 1e9;
  const perRound = 100_000;
  while (Bun.nanoseconds() < until) {
    const cpu0 = process.cpuUsage();
    const wall0 = Bun.nanoseconds();
    for (let i = 0; i < perRound; i++) run();
    const wall = (Bun.nanoseconds() - wall0) / perRound;
    const c = process.cpuUsage(cpu0);
    const cpu = ((c.user + c.system) * 1000) / perRound;
    if (cpu > 0) bestCpu = Math.min(bestCpu, cpu);
    bestWall = Math.min(bestWall, wall);
  }
  const rate = (ns: number) =>
    Math.round(1e9 / ns)
      .toLocaleString("en-US")
      .padStart(11);
  console.log(
    `${name.padEnd(38)} ${rate(bestCpu)} /s cpu ${bestCpu.toFixed(0).padStart(6)} ns/op   ${rate(bestWall)} /s wall`,
  );
}

const seconds = Number(process.argv[2] ?? 2);
const check = parseSip(invite);
if (!check.ok) throw new Error(`bench fixture does not parse: ${check.reason}`);
console.log(`Bun ${Bun.version}, INVITE ${invite.length} bytes, 200 OK ${ok200.length} bytes, ${seconds}s per case`);
measure("parseSip INVITE+SDP (defaults)", seconds, () => parseSip(invite));
measure("parseSip INVITE+SDP (custom headers)", seconds, () => parseSip(invite, opts));
measure("parseSip 200 OK", seconds, () => parseSip(ok200));
measure("parseSip + parseSdp INVITE", seconds, () => {
  const r = parseSip(invite);
  return r.ok ? parseSdp(sipBody(invite, r.value)) : undefined;
});
