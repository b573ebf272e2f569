import { cidrContains, parseCidr, parseIp, type Cidr } from "../../core/index.ts";
import type { ExcludedAddress } from "../../settings/index.ts";

/**
 * Which addresses an export leaves out (docs/API.md "Exports and share links": TransactionSessionRequest `whitelist` — "despite
 * its name, the addresses to exclude" — and the user's `export.transaction` setting,
 * `excludedCIDR: [{ip | alias, disabled}]`, "default exclusions for the export dialog").
 *
 * The rule (applied when the export is requested, then frozen into the job or share link so a later
 * settings change does not alter what a link serves):
 *  - every `whitelist` entry is excluded: an address or a CIDR network (`10.0.0.0/8`); an entry
 *    that is neither is compared as plain text with `src_ip` / `dst_ip`, as the spec words it;
 *  - in addition, unless the request says `use_default_exclusions: false` (the dialog sends the
 *    list it showed, after the user's edits), every enabled (`disabled` not true) `excludedCIDR`
 *    entry: `ip` as address or CIDR; `alias` as every active IP alias row of that name;
 *  - a message is dropped when its `src_ip` OR its `dst_ip` is excluded.
 */
export interface ExclusionInput {
  whitelist: readonly string[];
  useDefaults: boolean;
  defaults: readonly ExcludedAddress[];
  /** Address / CIDR texts of the active alias rows called `name` (empty when none). */
  aliasAddresses: (name: string) => readonly string[];
}

/** The exclusion list as texts (addresses, CIDRs, or literal strings), deduplicated, request order first. */
export function resolveExclusions(input: ExclusionInput): string[] {
  const out = new Set<string>();
  for (const w of input.whitelist) {
    const t = w.trim();
    if (t !== "") out.add(t);
  }
  if (input.useDefaults) {
    for (const e of input.defaults) {
      if (e.disabled) continue;
      if (e.ip) out.add(e.ip.trim());
      if (e.alias) for (const a of input.aliasAddresses(e.alias)) out.add(a.trim());
    }
  }
  return [...out];
}

export type IpMatcher = (ip: unknown) => boolean;

/** A predicate over `src_ip` / `dst_ip` values: true when the address is excluded. */
export function exclusionMatcher(list: readonly string[]): IpMatcher {
  const literal = new Set<string>();
  const nets: Cidr[] = [];
  for (const text of list) {
    const c = parseCidr(text);
    if (c) nets.push(c);
    else literal.add(text);
  }
  if (nets.length === 0 && literal.size === 0) return () => false;
  const seen = new Map<string, boolean>();
  return (ip) => {
    if (typeof ip !== "string") return false;
    let hit = seen.get(ip);
    if (hit === undefined) {
      const bytes = parseIp(ip);
      hit = literal.has(ip) || (bytes !== undefined && nets.some((n) => cidrContains(n, bytes)));
      if (seen.size < 4096) seen.set(ip, hit);
    }
    return hit;
  };
}

/** Messages whose source and destination are both kept. */
export function withoutExcluded<T extends { src_ip?: unknown; dst_ip?: unknown }>(
  items: readonly T[],
  excluded: IpMatcher,
): T[] {
  return items.filter((m) => !excluded(m.src_ip) && !excluded(m.dst_ip));
}
