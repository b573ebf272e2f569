/**
 * IP text → bytes and CIDR containment in the browser, for matching IP aliases (address or network,
 * docs/CALL-VIEW.md "Aliases") to ladder endpoints. The same reading as the server's alias resolver:
 * RFC 4291 §2.2 text forms, IPv4-mapped IPv6 (`::ffff:a.b.c.d`) folded to IPv4, a zone id ignored.
 * Pure; see ip-match.test.ts.
 */
export interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

function parseV4(s: string): Uint8Array | undefined {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return Uint8Array.from(parts, Number);
}

function parseV6(s: string): Uint8Array | undefined {
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseV4(item);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(item)) out.push(parseInt(item, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return undefined;
  const all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  const mapped = out.subarray(0, 10).every((b) => b === 0) && out[10] === 0xff && out[11] === 0xff;
  return mapped ? out.slice(12) : out;
}

/** 4 bytes for IPv4 (and IPv4-mapped IPv6), 16 for IPv6, undefined for other text. */
export function parseIp(text: string): Uint8Array | undefined {
  const t = text.trim().replace(/^\[(.*)\]$/, "$1");
  return parseV4(t) ?? parseV6(t.replace(/%[\w.-]+$/, ""));
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (a host route: /32 or /128). */
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

export function cidrContains(c: Cidr, ip: Uint8Array): boolean {
  if (c.bytes.length !== ip.length) return false;
  let bits = c.prefix;
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((c.bytes[i]! & mask) !== (ip[i]! & mask)) return false;
  }
  return true;
}
