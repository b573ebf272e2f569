import { cidrContains, parseCidrOrIp, parseIp, type Cidr } from "./ip.ts";

/** One IP alias row as the resolver needs it (spec doc 1: Aliases — IP/CIDR → name). */
export interface AliasEntry {
  ip: string;
  name: string;
  active: boolean;
}

export type AliasResolver = (ip: string) => string | undefined;

/**
 * Builds `resolveAlias(ip) → name`: the most specific active entry wins (longest prefix, as a
 * routing table would), so `10.1.2.3/32 → sbc-1` beats `10.0.0.0/8 → core`. Exact host entries are
 * answered from a map; networks are scanned longest-first. Pure: rebuild when the rows change.
 */
export function createAliasResolver(entries: readonly AliasEntry[]): AliasResolver {
  const hosts = new Map<string, string>();
  const nets: Array<{ cidr: Cidr; name: string }> = [];
  for (const e of entries) {
    if (!e.active) continue;
    const cidr = parseCidrOrIp(e.ip);
    if (!cidr) continue;
    if (cidr.prefix === cidr.bytes.length * 8) {
      const key = cidr.bytes.join(".");
      if (!hosts.has(key)) hosts.set(key, e.name);
    } else nets.push({ cidr, name: e.name });
  }
  nets.sort((a, b) => b.cidr.prefix - a.cidr.prefix);
  return (ip: string) => {
    const bytes = parseIp(ip);
    if (!bytes) return undefined;
    const exact = hosts.get(bytes.join("."));
    if (exact !== undefined) return exact;
    for (const n of nets) if (cidrContains(n.cidr, bytes)) return n.name;
    return undefined;
  };
}
