/**
 * Ladder columns (docs/CALL-VIEW.md "Columns"): which endpoint of a message is which column, and
 * what each column is called. Endpoints sharing an IP on different ports are never merged unless
 * the user asks for one column per IP: the default is IP:port when some IP of the call uses more
 * than one port (as sngrep and `svc search --format callflow` draw it), otherwise IP. Aliases come
 * from `GET /aliases`: an entry with a port names that IP:port, one without names the IP; an entry
 * with a capture id names the endpoint only as that capture point saw it. Pure; see
 * ladder-columns.test.ts.
 */
import { cidrContains, hostText, parseCidr, parseIp, type Cidr } from "../../../src/core/ip.ts";

export type ColumnMode = "ip" | "ipport" | "alias";

export const COLUMN_MODES: ReadonlyArray<[ColumnMode, string]> = [
  ["ip", "IP"],
  ["ipport", "IP:port"],
  ["alias", "Alias"],
];

/** The fields of a message the columns are made from. */
export interface EndpointMessage {
  src_ip: string;
  dst_ip: string;
  src_port: number | null;
  dst_port: number | null;
  node_id?: number | null;
  src_alias?: string | null;
  dst_alias?: string | null;
}

/** An entry of `GET /aliases`; `port` and `capture_id` are optional (older servers have neither). */
export interface AliasEntry {
  ip: string;
  name: string;
  active?: boolean;
  port?: number | null;
  capture_id?: number | string | null;
}

/** Name of an endpoint (its IP, port or null, and the capture ids that saw it), or null. */
export type AliasLookup = (ip: string, port: number | null, captureIds: readonly string[]) => string | null;

/**
 * The most specific active alias: an entry with a matching port before one without (IP:port first,
 * then IP), then one bound to a capture id that saw the endpoint before a general one, then the
 * longest network prefix (10.1.2.3 before 10.0.0.0/8).
 */
export function aliasLookup(entries: readonly AliasEntry[]): AliasLookup {
  const parsed: Array<{ cidr: Cidr; name: string; port: number | null; capture: string | null }> = [];
  for (const e of entries) {
    if (e.active === false || !e.name) continue;
    const cidr = parseCidr(e.ip);
    if (!cidr) continue;
    const port = typeof e.port === "number" && e.port > 0 ? e.port : null;
    const capture =
      e.capture_id === null || e.capture_id === undefined || e.capture_id === "" ? null : String(e.capture_id);
    parsed.push({ cidr, name: e.name, port, capture });
  }
  return (ip, port, captureIds) => {
    const bytes = parseIp(ip);
    if (!bytes) return null;
    let best: { score: number; name: string } | null = null;
    for (const e of parsed) {
      if (e.port !== null && e.port !== port) continue;
      if (e.capture !== null && !captureIds.includes(e.capture)) continue;
      if (!cidrContains(e.cidr, bytes)) continue;
      const score = (e.port !== null ? 1_000 : 0) + (e.capture !== null ? 500 : 0) + e.cidr.prefix;
      if (!best || score > best.score) best = { score, name: e.name };
    }
    return best?.name ?? null;
  };
}

export interface LadderColumn {
  /** What keeps the column apart: `ip` or `ip:port` (IPv6 in brackets). */
  key: string;
  ip: string;
  /** The port when the column is one IP:port, else null. */
  port: number | null;
  alias: string | null;
  /** First header line: the address (IP or IP:port mode) or the alias (alias mode, when one exists). */
  title: string;
  /** Second header line: the alias, or the address under an alias title; "" when there is none. */
  subtitle: string;
  /** Accessible name: `title (subtitle)`. */
  name: string;
}

export interface ColumnAssignment {
  columns: LadderColumn[];
  /** Column of each message's source and destination, in message order. */
  from: number[];
  to: number[];
}

const validPort = (p: number | null | undefined): number | null => (typeof p === "number" && p > 0 ? p : null);
export const endpointText = (ip: string, port: number | null) => (port === null ? ip : `${hostText(ip)}:${port}`);

/** IPs seen with more than one port in the call: one column per IP would merge their endpoints. */
export function sharedIps(messages: readonly EndpointMessage[]): Set<string> {
  const ports = new Map<string, Set<number | null>>();
  const add = (ip: string, port: number | null) => {
    let s = ports.get(ip);
    if (!s) ports.set(ip, (s = new Set()));
    s.add(validPort(port));
  };
  for (const m of messages) {
    add(m.src_ip, m.src_port);
    add(m.dst_ip, m.dst_port);
  }
  return new Set([...ports].filter(([, s]) => s.size > 1).map(([ip]) => ip));
}

/** IP:port when some IP uses several ports (keeps its endpoints apart), otherwise IP. */
export function defaultColumnMode(messages: readonly EndpointMessage[]): ColumnMode {
  return sharedIps(messages).size > 0 ? "ipport" : "ip";
}

/**
 * Columns in order of first appearance. `ip`: one per IP (ports shown at the arrow ends); `ipport`:
 * one per IP:port; `alias`: endpoints kept apart as by default, titled by their alias. `lookup`
 * (from the alias list) decides the names; without it (the list could not be read) the alias the
 * server resolved for each row's IP is used.
 */
export function assignColumns(
  messages: readonly EndpointMessage[],
  mode: ColumnMode,
  lookup?: AliasLookup,
): ColumnAssignment {
  const split = mode === "ipport" ? null : sharedIps(messages);
  const perPort = (ip: string) => split === null || split.has(ip);
  const portsOf = new Map<string, Set<number | null>>();
  const capturesOf = new Map<string, Set<string>>();
  const rowAlias = new Map<string, string>();
  const note = (key: string, port: number | null, capture: string | null, alias: string | null | undefined) => {
    let ports = portsOf.get(key);
    if (!ports) portsOf.set(key, (ports = new Set()));
    ports.add(validPort(port));
    let caps = capturesOf.get(key);
    if (!caps) capturesOf.set(key, (caps = new Set()));
    if (capture !== null) caps.add(capture);
    if (alias && !rowAlias.has(key)) rowAlias.set(key, alias);
  };
  const order: Array<{ key: string; ip: string; port: number | null }> = [];
  const index = new Map<string, number>();
  const column = (ip: string, port: number | null) => {
    const p = mode !== "ip" && perPort(ip) ? validPort(port) : null;
    const key = endpointText(ip, p);
    let i = index.get(key);
    if (i === undefined) {
      i = order.length;
      index.set(key, i);
      order.push({ key, ip, port: p });
    }
    return i;
  };
  const from: number[] = [];
  const to: number[] = [];
  for (const m of messages) {
    const capture = m.node_id === null || m.node_id === undefined ? null : String(m.node_id);
    const f = column(m.src_ip, m.src_port);
    const t = column(m.dst_ip, m.dst_port);
    note(order[f]!.key, m.src_port, capture, m.src_alias);
    note(order[t]!.key, m.dst_port, capture, m.dst_alias);
    from.push(f);
    to.push(t);
  }
  const columns = order.map(({ key, ip, port }): LadderColumn => {
    const ports = [...(portsOf.get(key) ?? [])];
    // A column of one IP seen on one port is named by an alias of that IP:port too.
    const aliasPort = port ?? (ports.length === 1 ? (ports[0] ?? null) : null);
    const alias = lookup ? lookup(ip, aliasPort, [...(capturesOf.get(key) ?? [])]) : (rowAlias.get(key) ?? null);
    const title = mode === "alias" && alias ? alias : key;
    const subtitle = mode === "alias" ? (alias ? key : "") : (alias ?? "");
    return { key, ip, port, alias, title, subtitle, name: subtitle ? `${title} (${subtitle})` : title };
  });
  return { columns, from, to };
}
