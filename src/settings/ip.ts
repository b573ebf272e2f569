import { parseIpv4, parseIpv6 } from "../hep/index.ts";

/**
 * IPv4/IPv6 text → bytes and CIDR matching, for IP aliases and export exclusions. Pure; the text
 * parsers are the HEP encoder's (RFC 4291 §2.2 forms, no octal-looking octets).
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is folded to IPv4 so one alias covers
 * both spellings a capture agent may report.
 */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

const isV4Mapped = (b: Uint8Array) => b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** 4 bytes for IPv4 (and IPv4-mapped IPv6), 16 for IPv6, undefined for anything else. */
export function parseIp(s: string): Uint8Array | undefined {
  const t = s.trim();
  const v4 = parseIpv4(t);
  if (v4) return v4;
  // A zone id (fe80::1%eth0) does not select a different address.
  const v6 = parseIpv6(t.replace(/%[\w.-]+$/, ""));
  if (!v6) return undefined;
  return isV4Mapped(v6) ? v6.slice(12) : v6;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a host route: /32 or /128). */
export function parseCidrOrIp(s: string): Cidr | undefined {
  const slash = s.indexOf("/");
  const addr = parseIp(slash < 0 ? s : s.slice(0, slash));
  if (!addr) return undefined;
  const max = addr.length * 8;
  if (slash < 0) return { bytes: addr, prefix: max };
  const p = s.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(p)) return undefined;
  let prefix = Number(p);
  // A v4-mapped network (::ffff:10.0.0.0/104) becomes the IPv4 network /8.
  if (addr.length === 4 && s.includes(":")) prefix -= 96;
  if (prefix < 0 || prefix > max) return undefined;
  return { bytes: addr, prefix };
}

export function cidrContains(c: Cidr, ip: Uint8Array): boolean {
  if (c.bytes.length !== ip.length) return false;
  let bits = c.prefix;
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((c.bytes[i]! & mask) !== (ip[i]! & mask)) return false;
  }
  return true;
}
