/**
 * IP aliases in the browser (docs/ADMIN.md, "IP aliases"): which alias row (`GET /aliases`) names
 * an endpoint seen as ip, port and HEP capture id. Most specific first: the longest address prefix
 * (a host beats its network), then a row with a port, then a row with a capture id; equal rows:
 * the oldest (`created_at`), else the first listed, wins. A row's port or capture id must equal the endpoint's; a row without one
 * matches every value. The ranking is the server's resolver (src/settings/alias-resolver.ts), imported
 * into the bundle: one copy, tested against test/fixtures/alias-cases.ts. Pure; see aliases.test.ts.
 */
import { hostText } from "../../../src/core/ip.ts";
import { createAliasResolver } from "../../../src/settings/alias-resolver.ts";

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

export type AliasLookup = (ip: string, port?: number | null, captureId?: number | null) => string | undefined;

/**
 * Ranks the active rows once with the server's own resolver; the returned lookup answers each
 * endpoint (for a whole ladder). The server hands the resolver its rows oldest first; a list from
 * `GET /aliases` may come in another order, so it is put oldest first here (a stable sort).
 */
export function aliasMatcher(rows: readonly AliasRow[]): AliasLookup {
  const oldestFirst = [...rows].sort((a, b) =>
    (a.created_at ?? "") < (b.created_at ?? "") ? -1 : (a.created_at ?? "") > (b.created_at ?? "") ? 1 : 0,
  );
  const resolve = createAliasResolver(
    oldestFirst.map((r) => ({
      ip: r.ip,
      name: r.name,
      active: r.active,
      port: r.port ?? null,
      captureId: r.capture_id ?? null,
    })),
  );
  return (ip, port, captureId) => resolve(ip, port ?? null, captureId ?? null);
}

/** Name of one endpoint, or undefined when no active alias matches. */
export function aliasFor(
  rows: readonly AliasRow[],
  ip: string,
  port?: number | null,
  captureId?: number | null,
): string | undefined {
  return aliasMatcher(rows)(ip, port, captureId);
}

/** "10.0.0.1", "10.0.0.0/8:5060", "10.0.0.1:5060 · capture 2001": what a row covers, for tables. */
export function aliasScope(row: Pick<AliasRow, "ip" | "port" | "capture_id">): string {
  const addr = row.port === null || row.port === undefined ? row.ip : `${hostText(row.ip)}:${row.port}`;
  return row.capture_id === null || row.capture_id === undefined ? addr : `${addr} · capture ${row.capture_id}`;
}
