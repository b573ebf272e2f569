/**
 * HEP sender for benchmarks: realistic ~870-byte INVITE-with-SDP HEP3 packets with distinct
 * Call-IDs, at a fixed rate, over UDP or TCP. The packet is encoded once; per packet only the
 * Call-ID digits and the timestamp chunks are patched, so the sender costs little CPU.
 *   bun bench/hep-sender.ts --target 127.0.0.1:9060 --transport udp --rate 50000 --seconds 60 --prefix run1 [--sources 1]
 * `--sources K` (UDP): K sockets, i.e. K source ports sending in turn (many agents); 1 = one
 * agent sending everything from one address and port (one kernel flow).
 * Prints one JSON line: {sent, seconds, rate}.
 */
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const [host, portText] = (args.get("target") ?? "127.0.0.1:9060").split(":");
const port = Number(portText);
const transport = args.get("transport") ?? "udp";
const rate = Number(args.get("rate") ?? "10000");
const seconds = Number(args.get("seconds") ?? "10");
const prefix = args.get("prefix") ?? "bench";
const sources = Math.max(1, Number(args.get("sources") ?? "1"));

const { packet, template, payloadBytes } = packetSource(prefix);

let sent = 0;
const started = performance.now();
const total = Math.round(rate * seconds);
if (transport === "udp") {
  const socks = await Promise.all(Array.from({ length: sources }, () => Bun.udpSocket({})));
  let turn = 0;
  const batch = 64;
  const bufs = Array.from({ length: batch }, () => template.slice());
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    if (due <= sent) {
      await Bun.sleep(1);
      continue;
    }
    while (sent < due) {
      const n = Math.min(batch, due - sent);
      const msgs: Array<Uint8Array | number | string> = [];
      for (let i = 0; i < n; i++) msgs.push(packet(sent + i, bufs[i]!), port, host!);
      const ok = socks[turn++ % sources]!.sendMany(msgs);
      sent += Math.max(ok, 0);
      if (ok < n) await Bun.sleep(0);
    }
  }
  for (const sock of socks) sock.close();
} else {
  const s = await Bun.connect({ hostname: host!, port, socket: { data() {}, drain() {} } });
  const buf = template.slice();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    if (due <= sent) {
      await Bun.sleep(1);
      continue;
    }
    const chunk = new Uint8Array((due - sent) * buf.length);
    for (let i = 0; sent < due; i++, sent++) chunk.set(packet(sent, buf), i * buf.length);
    let off = 0;
    while (off < chunk.length) {
      const w = s.write(chunk.subarray(off));
      off += w;
      if (off < chunk.length) await Bun.sleep(1);
    }
  }
  s.flush();
  s.end();
}
const secs = (performance.now() - started) / 1000;
console.log(
  JSON.stringify({
    sent,
    seconds: Math.round(secs * 100) / 100,
    rate: Math.round(sent / secs),
    packet_bytes: template.length,
    payload_bytes: payloadBytes,
  }),
);
