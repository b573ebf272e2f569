/**
 * Hand-built capture files and frames for the unit tests of this folder and for test/integration.
 * Every layer is spelled out so a test states exactly which bytes it feeds the reader.
 */
import { parseIpAddress } from "../core/index.ts";
import { concat } from "./bytes.ts";
import { writeEthernet, writeIpv4Header, writeIpv6Header, writeUdp } from "./frame-build.ts";

export const text = (s: string): Uint8Array => new TextEncoder().encode(s);
export const decodeText = (b: Uint8Array): string => new TextDecoder().decode(b);

export function ipBytes(address: string): Uint8Array {
  const p = parseIpAddress(address);
  if (p === null) throw new Error(`bad test address ${address}`);
  return p.bytes;
}

export function sipRequest(method: string, callId: string, body = ""): string {
  return (
    `${method} sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK-${callId}\r\n` +
    `From: <sip:alice@example.com>;tag=1\r\nTo: <sip:bob@example.com>\r\nCall-ID: ${callId}\r\nCSeq: 1 ${method}\r\n` +
    `Content-Length: ${text(body).length}\r\n\r\n${body}`
  );
}

export function sipResponse(status: number, callId: string): string {
  return `SIP/2.0 ${status} Whatever\r\nCall-ID: ${callId}\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n`;
}

// ---- files ----

export interface TestPacket {
  tsUs: number;
  data: Uint8Array;
}

/** Classic pcap. `nanos` writes the nanosecond magic with tsUs * 1000 + extraNs. */
export function pcapFile(
  packets: TestPacket[],
  opts: { linkType?: number; bigEndian?: boolean; nanos?: boolean; extraNs?: number } = {},
): Uint8Array {
  const le = !opts.bigEndian;
  const head = new Uint8Array(24);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, opts.nanos ? 0xa1b23c4d : 0xa1b2c3d4, le);
  hv.setUint16(4, 2, le);
  hv.setUint16(6, 4, le);
  hv.setUint32(16, 65535, le);
  hv.setUint32(20, opts.linkType ?? 1, le);
  const records = packets.map((p) => {
    const r = new Uint8Array(16 + p.data.length);
    const dv = new DataView(r.buffer);
    dv.setUint32(0, Math.floor(p.tsUs / 1e6), le);
    dv.setUint32(4, opts.nanos ? (p.tsUs % 1e6) * 1000 + (opts.extraNs ?? 0) : p.tsUs % 1e6, le);
    dv.setUint32(8, p.data.length, le);
    dv.setUint32(12, p.data.length, le);
    r.set(p.data, 16);
    return r;
  });
  return concat([head, ...records]);
}

/** pcapng blocks in one byte order; concatenate the results of several builders for several sections. */
export class PcapngBuilder {
  private readonly blocks: Uint8Array[] = [];
  constructor(private readonly le = true) {
    const body = new Uint8Array(16);
    const dv = new DataView(body.buffer);
    dv.setUint32(0, 0x1a2b3c4d, le);
    dv.setUint16(4, 1, le);
    dv.setBigInt64(8, -1n, le);
    this.block(0x0a0d0d0a, body);
  }

  block(type: number, body: Uint8Array): this {
    const padded = (body.length + 3) & ~3;
    const b = new Uint8Array(12 + padded);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, type, this.le);
    dv.setUint32(4, b.length, this.le);
    b.set(body, 8);
    dv.setUint32(b.length - 4, b.length, this.le);
    this.blocks.push(b);
    return this;
  }

  interface(linkType: number, opts: { tsresol?: number; tsoffsetSec?: number; snapLen?: number } = {}): this {
    const options: Uint8Array[] = [];
    if (opts.tsresol !== undefined) options.push(this.option(9, Uint8Array.of(opts.tsresol)));
    if (opts.tsoffsetSec !== undefined) {
      const v = new Uint8Array(8);
      new DataView(v.buffer).setBigInt64(0, BigInt(opts.tsoffsetSec), this.le);
      options.push(this.option(14, v));
    }
    if (options.length > 0) options.push(new Uint8Array(4));
    const body = new Uint8Array(8);
    const dv = new DataView(body.buffer);
    dv.setUint16(0, linkType, this.le);
    dv.setUint32(4, opts.snapLen ?? 0, this.le);
    return this.block(1, concat([body, ...options]));
  }

  /** Enhanced Packet Block; `ts` is in the interface's units. */
  packet(ifId: number, ts: bigint, data: Uint8Array): this {
    return this.block(6, concat([this.packetHeader(ifId, ts, data.length, false), data]));
  }

  /** Obsolete Packet Block (16-bit interface id and drop count). */
  obsoletePacket(ifId: number, ts: bigint, data: Uint8Array): this {
    return this.block(2, concat([this.packetHeader(ifId, ts, data.length, true), data]));
  }

  simplePacket(data: Uint8Array): this {
    const head = new Uint8Array(4);
    new DataView(head.buffer).setUint32(0, data.length, this.le);
    return this.block(3, concat([head, data]));
  }

  bytes(): Uint8Array {
    return concat(this.blocks);
  }

  private option(code: number, value: Uint8Array): Uint8Array {
    const o = new Uint8Array(4 + ((value.length + 3) & ~3));
    const dv = new DataView(o.buffer);
    dv.setUint16(0, code, this.le);
    dv.setUint16(2, value.length, this.le);
    o.set(value, 4);
    return o;
  }

  private packetHeader(ifId: number, ts: bigint, length: number, obsolete: boolean): Uint8Array {
    const h = new Uint8Array(20);
    const dv = new DataView(h.buffer);
    if (obsolete) dv.setUint16(0, ifId, this.le);
    else dv.setUint32(0, ifId, this.le);
    dv.setUint32(4, Number(ts >> 32n), this.le);
    dv.setUint32(8, Number(ts & 0xffffffffn), this.le);
    dv.setUint32(12, length, this.le);
    dv.setUint32(16, length, this.le);
    return h;
  }
}

// ---- link layers ----

/** Ethernet II; `tags` are TPIDs (0x8100, 0x88a8) of VLAN tags, outermost first. */
export function ethernet(etherType: number, payload: Uint8Array, tags: number[] = []): Uint8Array {
  const f = new Uint8Array(14 + tags.length * 4 + payload.length);
  writeEthernet(f, 0, tags[0] ?? etherType);
  let off = 12;
  tags.forEach((tpid, i) => {
    f[off] = tpid >> 8;
    f[off + 1] = tpid & 0xff;
    f[off + 2] = 0;
    f[off + 3] = 100 + i; // VLAN id
    off += 4;
  });
  f[off] = etherType >> 8;
  f[off + 1] = etherType & 0xff;
  f.set(payload, off + 2);
  return f;
}

export function sll(protocol: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(16 + payload.length);
  f[1] = 0; // packet type: to us
  f[3] = 1; // ARPHRD_ETHER
  f[5] = 6;
  f[14] = protocol >> 8;
  f[15] = protocol & 0xff;
  f.set(payload, 16);
  return f;
}

export function sll2(protocol: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(20 + payload.length);
  f[0] = protocol >> 8;
  f[1] = protocol & 0xff;
  f[9] = 1;
  f[11] = 6;
  f.set(payload, 20);
  return f;
}

export function loopback(family: number, payload: Uint8Array, bigEndian: boolean): Uint8Array {
  const f = new Uint8Array(4 + payload.length);
  new DataView(f.buffer).setUint32(0, family, !bigEndian);
  f.set(payload, 4);
  return f;
}

// ---- IP ----

export interface Ipv4Opts {
  src: string;
  dst: string;
  protocol: number;
  id?: number;
  moreFragments?: boolean;
  fragmentOffset?: number;
  options?: Uint8Array;
}

export function ipv4(o: Ipv4Opts, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(20 + (o.options?.length ?? 0) + payload.length);
  const fields = {
    src: ipBytes(o.src),
    dst: ipBytes(o.dst),
    protocol: o.protocol,
    payloadLength: payload.length,
    id: o.id ?? 1,
  };
  const hl = writeIpv4Header(out, 0, {
    ...fields,
    moreFragments: o.moreFragments ?? false,
    fragmentOffset: o.fragmentOffset ?? 0,
    ...(o.options ? { options: o.options } : {}),
  });
  out.set(payload, hl);
  return out;
}

/** IPv6; `payload` starts with any extension headers, `nextHeader` names the first of them. */
export function ipv6(o: { src: string; dst: string; nextHeader: number }, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(40 + payload.length);
  writeIpv6Header(out, 0, {
    src: ipBytes(o.src),
    dst: ipBytes(o.dst),
    nextHeader: o.nextHeader,
    payloadLength: payload.length,
  });
  out.set(payload, 40);
  return out;
}

/** An IPv6 extension header sized in 8-byte units (hop-by-hop 0, routing 43, destination options 60). */
export function ipv6Ext(next: number, units: number): Uint8Array {
  const h = new Uint8Array((units + 1) * 8);
  h[0] = next;
  h[1] = units;
  h[2] = 1; // PadN option filling the rest
  h[3] = h.length - 4;
  return h;
}

export function ipv6Fragment(next: number, offset: number, more: boolean, id: number): Uint8Array {
  const h = new Uint8Array(8);
  const dv = new DataView(h.buffer);
  h[0] = next;
  dv.setUint16(2, offset | (more ? 1 : 0));
  dv.setUint32(4, id);
  return h;
}

// ---- transport ----

export function udp(src: string, dst: string, srcPort: number, dstPort: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + payload.length);
  writeUdp(out, 0, { srcPort, dstPort, payload, src: ipBytes(src), dst: ipBytes(dst) });
  return out;
}

export function tcp(
  o: { srcPort: number; dstPort: number; seq: number; syn?: boolean; fin?: boolean },
  payload: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const out = new Uint8Array(20 + payload.length);
  const dv = new DataView(out.buffer);
  dv.setUint16(0, o.srcPort);
  dv.setUint16(2, o.dstPort);
  dv.setUint32(4, o.seq >>> 0);
  out[12] = 5 << 4;
  out[13] = 0x10 | (o.syn ? 0x02 : 0) | (o.fin ? 0x01 : 0);
  dv.setUint16(14, 65535);
  out.set(payload, 20);
  return out;
}

export interface TestSctpChunk {
  tsn: number;
  streamId?: number;
  ppid?: number;
  begin?: boolean;
  end?: boolean;
  payload: Uint8Array;
}

export function sctp(srcPort: number, dstPort: number, chunks: TestSctpChunk[], extra: Uint8Array[] = []): Uint8Array {
  const common = new Uint8Array(12);
  new DataView(common.buffer).setUint16(0, srcPort);
  new DataView(common.buffer).setUint16(2, dstPort);
  const encoded = chunks.map((c) => {
    const length = 16 + c.payload.length;
    const b = new Uint8Array((length + 3) & ~3);
    const dv = new DataView(b.buffer);
    b[1] = ((c.begin ?? true) ? 2 : 0) | ((c.end ?? true) ? 1 : 0);
    dv.setUint16(2, length);
    dv.setUint32(4, c.tsn);
    dv.setUint16(8, c.streamId ?? 0);
    dv.setUint32(12, c.ppid ?? 0);
    b.set(c.payload, 16);
    return b;
  });
  return concat([common, ...extra, ...encoded]);
}

// ---- WebSocket ----

export function wsFrame(o: { payload: Uint8Array; opcode?: number; fin?: boolean; mask?: Uint8Array }): Uint8Array {
  const len = o.payload.length;
  const ext = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const head = new Uint8Array(2 + ext + (o.mask ? 4 : 0));
  head[0] = ((o.fin ?? true) ? 0x80 : 0) | (o.opcode ?? 1);
  head[1] = (o.mask ? 0x80 : 0) | (ext === 0 ? len : ext === 2 ? 126 : 127);
  const dv = new DataView(head.buffer);
  if (ext === 2) dv.setUint16(2, len);
  if (ext === 8) dv.setUint32(6, len);
  const body = o.payload.slice();
  if (o.mask) {
    head.set(o.mask, 2 + ext);
    for (let i = 0; i < body.length; i++) body[i] = (body[i] ?? 0) ^ (o.mask[i & 3] ?? 0);
  }
  return concat([head, body]);
}
