/**
 * The HEP datagrams an agent put on the wire, read from a capture with tshark (Wireshark 4.0 has
 * no HEP dissector, so the few chunks the tests look at are read here, apart from src/hep): the
 * count tells whether the appliance stored everything it was sent, and the capture id chunk tells
 * what node_id must be.
 */
export interface HepDatagram {
  /** HEP3 chunk 0x000c (capture agent id), big-endian uint32 as on the wire. */
  captureId: number | undefined;
  /** HEP3 chunk 0x000b (payload type): 1 = SIP. */
  protoType: number | undefined;
  /** HEP3 chunks 0x0009 / 0x000a (seconds, microseconds): the capture time the agent stamped, µs. */
  timestampUs: number | undefined;
  /** HEP3 chunk 0x000f (the captured payload) as lowercase hex. */
  payloadHex: string | undefined;
}

/** Walks the generic chunks of one HEP3 datagram (vendor 0 only; "HEP3", total length, then chunks). */
export function readHep3Chunks(bytes: Uint8Array): HepDatagram {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: HepDatagram = {
    captureId: undefined,
    protoType: undefined,
    timestampUs: undefined,
    payloadHex: undefined,
  };
  let sec: number | undefined;
  let usec: number | undefined;
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== "HEP3") return out;
  const total = Math.min(dv.getUint16(4), bytes.length);
  for (let off = 6; off + 6 <= total; ) {
    const vendor = dv.getUint16(off);
    const type = dv.getUint16(off + 2);
    const len = dv.getUint16(off + 4);
    if (len < 6) break;
    if (vendor === 0 && type === 0x000c && len === 10) out.captureId = dv.getUint32(off + 6);
    if (vendor === 0 && type === 0x000b && len === 7) out.protoType = dv.getUint8(off + 6);
    if (vendor === 0 && type === 0x0009 && len === 10) sec = dv.getUint32(off + 6);
    if (vendor === 0 && type === 0x000a && len === 10) usec = dv.getUint32(off + 6);
    if (vendor === 0 && type === 0x000f)
      out.payloadHex = Buffer.from(bytes.subarray(off + 6, off + len)).toString("hex");
    off += len;
  }
  if (sec !== undefined && usec !== undefined) out.timestampUs = sec * 1_000_000 + usec;
  return out;
}

/** Every UDP datagram to `port` in the capture, as HEP3, in the order they were sent (frame order). */
export function hepDatagrams(pcapPath: string, port: number): HepDatagram[] {
  const r = Bun.spawnSync(
    ["tshark", "-n", "-r", pcapPath, "-Y", `udp.dstport == ${port}`, "-T", "fields", "-e", "udp.payload"],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`tshark -r ${pcapPath} failed: ${r.stderr.toString()}`);
  return r.stdout
    .toString()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((hex) => readHep3Chunks(new Uint8Array(Buffer.from(hex.replaceAll(":", "").trim(), "hex"))));
}
