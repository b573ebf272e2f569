/**
 * IP addresses, the one module for them (server and dashboard bundle alike, so it imports nothing):
 * IPv4 dotted quad and IPv6 text in the RFC 5952 canonical form (what tshark prints, so addresses
 * from a capture compare equal to its ip.src / ipv6.src); text parsers for the RFC 4291 §2.2 forms
 * (no octal-looking IPv4 octets) that return null instead of throwing; and CIDR containment for IP
 * aliases and export exclusions, with IPv4-mapped IPv6 (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) folded
 * to IPv4 so one alias covers both spellings a capture agent may report.
 */

// A capture sees the same few thousand addresses over and over: a direct-mapped cache of their text
// saves the number-to-string work (~17 ns per address) and returns strings already in memory.
const V4_BITS = 12;
const v4Keys = new Int32Array(1 << V4_BITS);
const v4Texts: (string | undefined)[] = new Array<string | undefined>(1 << V4_BITS).fill(undefined);

/** Dotted quad of the four octets at `offset` (inet4-addr, most significant octet first). */
export function formatIpv4(bytes: Uint8Array, offset = 0): string {
  const b0 = bytes[offset]!;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  const b3 = bytes[offset + 3]!;
  const key = (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
  const slot = Math.imul(key, 0x9e3779b1) >>> (32 - V4_BITS);
  if (v4Keys[slot] === key) {
    const cached = v4Texts[slot];
    if (cached !== undefined) return cached;
  }
  const text = `${b0}.${b1}.${b2}.${b3}`;
  v4Keys[slot] = key;
  v4Texts[slot] = text;
  return text;
}

// Same idea for IPv6, where building the text costs ~190 ns: slot keys are the 16 octets themselves.
const V6_BITS = 10;
const v6Keys = new Uint8Array(16 << V6_BITS);
const v6Texts: (string | undefined)[] = new Array<string | undefined>(1 << V6_BITS).fill(undefined);

/**
 * RFC 5952 text of the 16 octets at `offset`: lower-case hex without leading zeros (4.1, 4.3), the
 * longest run of two or more zero groups replaced by "::", the first run on a tie (4.2.1-4.2.3), and
 * IPv4-mapped addresses in mixed notation "::ffff:a.b.c.d" (section 5).
 */
export function formatIpv6(bytes: Uint8Array, offset = 0): string {
  let hash = 0;
  for (let i = 0; i < 16; i += 4) {
    const word =
      (bytes[offset + i]! << 24) |
      (bytes[offset + i + 1]! << 16) |
      (bytes[offset + i + 2]! << 8) |
      bytes[offset + i + 3]!;
    hash = Math.imul(hash ^ word, 0x9e3779b1);
  }
  const slot = hash >>> (32 - V6_BITS);
  const base = slot << 4;
  const cached = v6Texts[slot];
  if (cached !== undefined) {
    let i = 0;
    while (i < 16 && v6Keys[base + i] === bytes[offset + i]) i++;
    if (i === 16) return cached;
  }
  const text = ipv6Text(bytes, offset);
  v6Keys.set(bytes.subarray(offset, offset + 16), base);
  v6Texts[slot] = text;
  return text;
}

// Scratch for the eight 16-bit groups; decoding is synchronous, so one shared array is safe.
const groups = new Uint16Array(8);

function ipv6Text(bytes: Uint8Array, offset: number): string {
  let bestStart = -1;
  let bestLen = 1; // a single zero group is never compressed (4.2.2)
  let runStart = -1;
  for (let i = 0; i < 8; i++) {
    const g = (bytes[offset + 2 * i]! << 8) | bytes[offset + 2 * i + 1]!;
    groups[i] = g;
    if (g === 0) {
      if (runStart < 0) runStart = i;
      if (i - runStart + 1 > bestLen) {
        bestLen = i - runStart + 1;
        bestStart = runStart;
      }
    } else {
      runStart = -1;
    }
  }
  if (bestStart === 0 && bestLen === 5 && groups[5] === 0xffff) return `::ffff:${formatIpv4(bytes, offset + 12)}`;
  let text = "";
  let needColon = false;
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      text += "::";
      i += bestLen - 1;
      needColon = false;
      continue;
    }
    if (needColon) text += ":";
    text += groups[i]!.toString(16);
    needColon = true;
  }
  return text;
}

/** Four octets of a dotted quad ("192.0.2.1"), or null. Leading zeros are refused (ambiguous octal). */
export function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    out[i] = v;
  }
  return out;
}

/** Sixteen octets of an IPv6 text address (RFC 4291 2.2: "::", a trailing dotted quad), or null. */
export function parseIpv6(text: string): Uint8Array | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    const items = s.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseIpv4(item);
        if (v4 === null) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = parseGroups(halves[0]!);
  const tail = halves.length === 2 ? parseGroups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  const all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

export interface ParsedIp {
  family: 4 | 6;
  bytes: Uint8Array;
}

/**
 * "1.2.3.4", "2001:db8::1", "[2001:db8::1]", "fe80::1%eth0" (a zone id does not select another
 * address) with its family; IPv4-mapped IPv6 stays IPv6 (16 bytes). Null for other text.
 */
export function parseIpAddress(text: string): ParsedIp | null {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const v4 = parseIpv4(s);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseIpv6(s.replace(/%[\w.-]+$/, ""));
  return v6 ? { family: 6, bytes: v6 } : null;
}

const isV4Mapped = (b: Uint8Array) =>
  b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/**
 * 4 bytes for IPv4 and IPv4-mapped IPv6, 16 for IPv6, undefined for other text (brackets too: an
 * address field holds the bare address). A zone id (fe80::1%eth0) is ignored.
 */
export function parseIp(text: string): Uint8Array | undefined {
  const t = text.trim();
  const v4 = parseIpv4(t);
  if (v4) return v4;
  const v6 = parseIpv6(t.replace(/%[\w.-]+$/, ""));
  if (!v6) return undefined;
  return isV4Mapped(v6) ? v6.slice(12) : v6;
}

/** An address network: the address bytes as parseIp gives them and the prefix length in bits. */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a host route: /32 or /128); undefined otherwise. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  const bytes = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  if (slash < 0) return { bytes, prefix: max };
  const p = text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(p)) return undefined;
  // A v4-mapped network (::ffff:10.0.0.0/104) is the IPv4 network /8.
  const prefix = Number(p) - (bytes.length === 4 && text.includes(":") ? 96 : 0);
  return prefix < 0 || prefix > max ? undefined : { bytes, prefix };
}

/**
 * Why `text` is not an address or CIDR network, in one line that names the value (docs/ADMIN.md
 * "IP aliases"): "127.0.0.1/33: prefix length must be 0-32"; undefined when parseCidr reads it.
 */
export function cidrProblem(text: string): string | undefined {
  if (parseCidr(text)) return undefined;
  const t = text.trim();
  if (t === "") return "an address or CIDR network is required (e.g. 10.0.0.0/8)";
  const slash = t.indexOf("/");
  if (slash < 0) return `${t}: not an IPv4 or IPv6 address (e.g. 10.0.0.1, 2001:db8::1, or a network 10.0.0.0/8)`;
  const addr = t.slice(0, slash).trim();
  const bytes = parseIp(addr);
  if (!bytes) return `${t}: ${addr || "(nothing)"} before the / is not an IPv4 or IPv6 address`;
  const max = addr.includes(":") ? 128 : 32;
  return `${t}: prefix length must be 0-${max}`;
}

/** True when `ip` (bytes from parseIp) lies in the network; never across families. */
export function cidrContains(c: Cidr, ip: Uint8Array): boolean {
  if (c.bytes.length !== ip.length) return false;
  let bits = c.prefix;
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((c.bytes[i]! & mask) !== (ip[i]! & mask)) return false;
  }
  return true;
}

/** An address as the host part of `host:port`: IPv6 in brackets (RFC 3986 §3.2.2), others as they are. */
export const hostText = (ip: string): string => (ip.includes(":") ? `[${ip}]` : ip);
