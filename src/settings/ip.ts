/**
 * IPv4/IPv6 text → bytes and CIDR matching, for IP aliases and export exclusions. Pure.
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is folded to IPv4 so one alias covers
 * both spellings a capture agent may report.
 */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

export function parseIpv4(s: string): Uint8Array | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p.startsWith("0"))) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

export function parseIpv6(input: string): Uint8Array | undefined {
  const s = input.replace(/%[\w.-]+$/, ""); // zone id (fe80::1%eth0) does not select a different address
  if (!/^[0-9a-fA-F:.]+$/.test(s) || s.split("::").length > 2) return undefined;
  const [headText, tailText] = s.includes("::") ? (s.split("::") as [string, string]) : [s, undefined];
  const groups = (text: string): number[] | undefined => {
    if (text === "") return [];
    const out: number[] = [];
    const parts = text.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseIpv4(p);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(headText);
  const tail = tailText === undefined ? [] : groups(tailText);
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (tailText === undefined ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<number>(tailText === undefined ? 0 : missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

const isV4Mapped = (b: Uint8Array) => b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** 4 bytes for IPv4 (and IPv4-mapped IPv6), 16 for IPv6, undefined for anything else. */
export function parseIp(s: string): Uint8Array | undefined {
  const t = s.trim();
  const v4 = parseIpv4(t);
  if (v4) return v4;
  const v6 = parseIpv6(t);
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
