/**
 * IP aliases in the browser (docs/ADMIN.md, "IP aliases"): which alias row (`GET /aliases`) names
 * an endpoint seen as ip, port and HEP capture id. Most specific first: the longest address prefix
 * (a host beats its network), then a row with a port, then a row with a capture id; equal rows:
 * the oldest (`created_at`), else the first listed, wins. A row's port or capture id must equal the endpoint's; a row without one
 * matches every value. The server's resolver (src/settings/alias-resolver.ts) ranks the same way:
 * both are tested against test/fixtures/alias-cases.ts. Pure; see aliases.test.ts.
 */
// The HEP encoder's text parsers (RFC 4291 §2.2 forms): a file without imports, so the bundle
// takes only these two functions.
import { parseIpv4, parseIpv6 } from "../../../src/hep/address.ts";

/** An alias row as `GET /aliases` lists it. */
export interface AliasRow {
  ip: string;
  name: string;
  active: boolean;
  port?: number | null;
  capture_id?: number | null;
  /** Breaks ties between equally specific rows: the oldest wins, as on the server. */
  created_at?: string;
}

interface Rule {
  bytes: Uint8Array;
  prefix: number;
  name: string;
  port: number | null;
  captureId: number | null;
  createdAt: string;
}

const isV4Mapped = (b: Uint8Array) => b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** 4 bytes for IPv4 and IPv4-mapped IPv6 (one alias covers both spellings), 16 for IPv6. */
export function ipBytes(text: string): Uint8Array | undefined {
  const t = text.trim();
  const v4 = parseIpv4(t);
  if (v4) return v4;
  const v6 = parseIpv6(t.replace(/%[\w.-]+$/, ""));
  if (!v6) return undefined;
  return isV4Mapped(v6) ? v6.slice(12) : v6;
}

function parseRule(row: AliasRow): Rule | undefined {
  const slash = row.ip.indexOf("/");
  const bytes = ipBytes(slash < 0 ? row.ip : row.ip.slice(0, slash));
  if (!bytes) return undefined;
  const max = bytes.length * 8;
  let prefix = max;
  if (slash >= 0) {
    const p = row.ip.slice(slash + 1).trim();
    if (!/^\d{1,3}$/.test(p)) return undefined;
    prefix = Number(p) - (bytes.length === 4 && row.ip.includes(":") ? 96 : 0);
    if (prefix < 0 || prefix > max) return undefined;
  }
  return { bytes, prefix, name: row.name, port: row.port ?? null, captureId: row.capture_id ?? null, createdAt: row.created_at ?? "" };
}

function contains(r: Rule, ip: Uint8Array): boolean {
  if (r.bytes.length !== ip.length) return false;
  let bits = r.prefix;
  for (let i = 0; i < ip.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((r.bytes[i]! & mask) !== (ip[i]! & mask)) return false;
  }
  return true;
}

const has = (v: number | null) => Number(v !== null);
/** Negative when `a` is more specific than `b`. */
const bySpecificity = (a: Rule, b: Rule) =>
  b.prefix - a.prefix || has(b.port) - has(a.port) || has(b.captureId) - has(a.captureId) || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);

export type AliasLookup = (ip: string, port?: number | null, captureId?: number | null) => string | undefined;

/** Ranks the active rows once; the returned lookup answers each endpoint (for a whole ladder). */
export function aliasMatcher(rows: readonly AliasRow[]): AliasLookup {
  const rules = rows.flatMap((r) => {
    const rule = r.active ? parseRule(r) : undefined;
    return rule ? [rule] : [];
  });
  // Array.prototype.sort is stable: equal rows of the same age keep their listed order.
  rules.sort(bySpecificity);
  return (ip, port, captureId) => {
    const bytes = ipBytes(ip);
    if (!bytes) return undefined;
    const p = port ?? null;
    const c = captureId ?? null;
    return rules.find((r) => (r.port === null || r.port === p) && (r.captureId === null || r.captureId === c) && contains(r, bytes))?.name;
  };
}

/** Name of one endpoint, or undefined when no active alias matches. */
export function aliasFor(rows: readonly AliasRow[], ip: string, port?: number | null, captureId?: number | null): string | undefined {
  return aliasMatcher(rows)(ip, port, captureId);
}

/** "10.0.0.1", "10.0.0.0/8:5060", "10.0.0.1:5060 · capture 2001": what a row covers, for tables. */
export function aliasScope(row: Pick<AliasRow, "ip" | "port" | "capture_id">): string {
  const v6 = row.ip.includes(":");
  const addr = row.port === null || row.port === undefined ? row.ip : v6 ? `[${row.ip}]:${row.port}` : `${row.ip}:${row.port}`;
  return row.capture_id === null || row.capture_id === undefined ? addr : `${addr} · capture ${row.capture_id}`;
}
