// By path, not core/index.ts: the dashboard bundle imports this file (ui/src/lib/aliases.ts).
import { cidrContains, parseCidr, parseIp, type Cidr } from "../core/ip.ts";

/**
 * One IP alias row as the resolver needs it (docs/ADMIN.md "IP aliases": IP/CIDR → name), with the
 * optional port and HEP capture id (null = every port / every capture point).
 */
export interface AliasEntry {
  ip: string;
  name: string;
  active: boolean;
  port?: number | null;
  captureId?: number | null;
}

/** Name of an endpoint; a port or capture id left out matches only rows without one. */
export type AliasResolver = (ip: string, port?: number | null, captureId?: number | null) => string | undefined;

interface Rule {
  cidr: Cidr;
  name: string;
  port: number | null;
  captureId: number | null;
}

/**
 * Most specific first (docs/ADMIN.md, "IP aliases"): the longest address prefix decides (a host
 * beats its network, as a routing table would), then a row with a port beats one without, then a
 * row with a capture id beats one without. Equal rows: the first one given wins (AliasesRepo gives
 * them oldest first). The browser's
 * `aliasFor` (ui/src/lib/aliases.ts) ranks the same way; test/fixtures/alias-cases.ts holds the
 * cases both are tested against.
 */
export function compareAliasSpecificity(
  a: { prefix: number; port: number | null; captureId: number | null },
  b: typeof a,
): number {
  return (
    b.prefix - a.prefix ||
    Number(b.port !== null) - Number(a.port !== null) ||
    Number(b.captureId !== null) - Number(a.captureId !== null)
  );
}

/**
 * Builds `resolveAlias(ip, port, captureId) → name`. Host rows are answered from a map keyed by
 * address; networks are scanned most specific first. Pure: rebuild when the rows change.
 */
export function createAliasResolver(entries: readonly AliasEntry[]): AliasResolver {
  const hosts = new Map<string, Rule[]>();
  const nets: Rule[] = [];
  for (const e of entries) {
    if (!e.active) continue;
    const cidr = parseCidr(e.ip);
    if (!cidr) continue;
    const rule: Rule = { cidr, name: e.name, port: e.port ?? null, captureId: e.captureId ?? null };
    if (cidr.prefix === cidr.bytes.length * 8) {
      const key = cidr.bytes.join(".");
      const list = hosts.get(key) ?? [];
      list.push(rule);
      hosts.set(key, list);
    } else nets.push(rule);
  }
  const bySpecificity = (a: Rule, b: Rule) =>
    compareAliasSpecificity({ ...a, prefix: a.cidr.prefix }, { ...b, prefix: b.cidr.prefix });
  // Array.prototype.sort is stable: equal rows keep their given order.
  for (const list of hosts.values()) list.sort(bySpecificity);
  nets.sort(bySpecificity);
  return (ip, port, captureId) => {
    const bytes = parseIp(ip);
    if (!bytes) return undefined;
    const fits = (r: Rule) =>
      (r.port === null || r.port === port) && (r.captureId === null || r.captureId === captureId);
    const host = hosts.get(bytes.join("."))?.find(fits);
    if (host) return host.name;
    return nets.find((n) => fits(n) && cidrContains(n.cidr, bytes))?.name;
  };
}
