/**
 * IP address text forms: IPv4 dotted quad and IPv6 in the RFC 5952 canonical form (lower-case hex,
 * no leading zeros, the longest run of two or more zero groups shortened to "::", the first run on a
 * tie, IPv4-mapped addresses as ::ffff:a.b.c.d per RFC 5952 §5). This is how tshark prints them, so
 * addresses from a capture compare equal to its ip.src / ipv6.src fields.
 */

export function formatIpv4(b: Uint8Array, off = 0): string {
  return `${b[off]}.${b[off + 1]}.${b[off + 2]}.${b[off + 3]}`;
}

export function formatIpv6(b: Uint8Array, off = 0): string {
  const groups: number[] = [];
  for (let i = 0; i < 8; i++) groups.push(((b[off + 2 * i] ?? 0) << 8) | (b[off + 2 * i + 1] ?? 0));
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `::ffff:${formatIpv4(b, off + 12)}`;
  }
  // RFC 5952 §4.2.2-4.2.3: compress the longest run (length >= 2), the first one on a tie.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) => groups.slice(from, to).map((g) => g.toString(16)).join(":");
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

export interface ParsedIp {
  family: 4 | 6;
  bytes: Uint8Array;
}

function parseIpv4Into(text: string, out: Uint8Array, off: number): boolean {
  const parts = text.split(".");
  if (parts.length !== 4) return false;
  for (let i = 0; i < 4; i++) {
    const p = parts[i] ?? "";
    if (!/^\d{1,3}$/.test(p)) return false;
    const v = Number(p);
    if (v > 255) return false;
    out[off + i] = v;
  }
  return true;
}

function parseGroups(text: string, allowV4Tail: boolean): number[] | null {
  if (text === "") return [];
  const groups: number[] = [];
  const parts = text.split(":");
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] ?? "";
    if (allowV4Tail && i === parts.length - 1 && p.includes(".")) {
      const v4 = new Uint8Array(4);
      if (!parseIpv4Into(p, v4, 0)) return null;
      groups.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      continue;
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
    groups.push(parseInt(p, 16));
  }
  return groups;
}

/** Parses "1.2.3.4", "2001:db8::1", "[2001:db8::1]", "fe80::1%eth0" and "::ffff:1.2.3.4"; null otherwise. */
export function parseIp(text: string): ParsedIp | null {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) {
    const bytes = new Uint8Array(4);
    return parseIpv4Into(s, bytes, 0) ? { family: 4, bytes } : null;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] ?? "", halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? "", true) : [];
  if (head === null || tail === null) return null;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return { family: 6, bytes };
}
