import { createAliasResolver, type AliasResolver } from "./alias-resolver.ts";
import { invalidField, newId, nowMs, toBool, updateColumns, type SettingsDb } from "./db.ts";
import { cidrProblem } from "../core/index.ts";
import { addEquals, emptyFilter, likeContains, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

/**
 * IP aliases: an address or CIDR network, optionally one port and one HEP capture id, named for
 * search results and ladders (docs/ADMIN.md, "IP aliases").
 */
export interface IpAlias {
  id: string;
  ip: string;
  name: string;
  group: string;
  active: boolean;
  /** null = every port. */
  port: number | null;
  /** HEP capture agent id (chunk 0x000c); null = every capture point. */
  captureId: number | null;
  createdAt: number;
  updatedAt: number;
}

export type IpAliasInput = Pick<IpAlias, "ip" | "name"> &
  Partial<Pick<IpAlias, "group" | "active" | "port" | "captureId">>;

interface Row {
  id: string;
  ip: string;
  name: string;
  alias_group: string;
  active: number;
  port: number | null;
  capture_id: number | null;
  created_at: number;
  updated_at: number;
}

const toAlias = (r: Row): IpAlias => ({
  id: r.id,
  ip: r.ip,
  name: r.name,
  group: r.alias_group,
  active: toBool(r.active),
  port: r.port,
  captureId: r.capture_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const ALIAS_SORTS = { name: "name", ip: "ip", group: "alias_group", created_at: "created_at" } as const;

/** HEP3 capture ids are 32-bit; 0 is what agents send when none is configured and is stored as none. */
export const MAX_CAPTURE_ID = 4294967295;

function check(a: Partial<IpAliasInput>): void {
  const ipProblem = a.ip === undefined ? undefined : cidrProblem(a.ip);
  if (ipProblem !== undefined) throw invalidField("ip", ipProblem);
  if (a.port !== undefined && a.port !== null && !(Number.isInteger(a.port) && a.port >= 1 && a.port <= 65535)) {
    throw invalidField("port", "must be an integer from 1 to 65535, or null for every port");
  }
  if (
    a.captureId !== undefined &&
    a.captureId !== null &&
    !(Number.isInteger(a.captureId) && a.captureId >= 1 && a.captureId <= MAX_CAPTURE_ID)
  ) {
    throw invalidField("capture_id", `must be an integer from 1 to ${MAX_CAPTURE_ID}, or null for every capture point`);
  }
}

export class AliasesRepo {
  private resolver: AliasResolver | undefined;

  constructor(private readonly h: SettingsDb) {}

  list(filters: { group?: string | undefined; active?: boolean | undefined }, paging: PageInput): Page<IpAlias> {
    const page = pageRequest(paging, ALIAS_SORTS, "name");
    const f = emptyFilter();
    addEquals(f, "alias_group", filters.group);
    addEquals(f, "active", filters.active);
    if (page.search) {
      f.where.push("(name LIKE $q ESCAPE '\\' OR ip LIKE $q ESCAPE '\\')");
      f.params.q = likeContains(page.search);
    }
    return queryPage<Row, IpAlias>(this.h.db, "ip_aliases", f, page, ALIAS_SORTS, toAlias);
  }

  get(id: string): IpAlias | undefined {
    const r = this.h.db.query("SELECT * FROM ip_aliases WHERE id = $id").get({ id }) as Row | null;
    return r ? toAlias(r) : undefined;
  }

  create(a: IpAliasInput): IpAlias {
    check(a);
    const id = newId();
    const now = nowMs();
    this.h.db
      .query(
        "INSERT INTO ip_aliases (id, ip, name, alias_group, active, port, capture_id, created_at, updated_at) VALUES ($id, $ip, $name, $group, $active, $port, $capture, $now, $now)",
      )
      .run({
        id,
        ip: a.ip.trim(),
        name: a.name,
        group: a.group ?? "",
        active: a.active === false ? 0 : 1,
        port: a.port ?? null,
        capture: a.captureId ?? null,
        now,
      });
    this.resolver = undefined;
    return this.get(id)!;
  }

  update(id: string, a: Partial<IpAliasInput>): IpAlias | undefined {
    check(a);
    updateColumns(
      this.h,
      "ip_aliases",
      { column: "id", value: id },
      { ...a, ip: a.ip?.trim() },
      { ip: "ip", name: "name", group: "alias_group", active: "active", port: "port", captureId: "capture_id" },
    );
    this.resolver = undefined;
    return this.get(id);
  }

  delete(id: string): boolean {
    this.resolver = undefined;
    return this.h.db.query("DELETE FROM ip_aliases WHERE id = $id").run({ id }).changes > 0;
  }

  /** Alias name of an endpoint (most specific active entry), cached until the aliases change. */
  resolveAlias(ip: string, port?: number | null, captureId?: number | null): string | undefined {
    if (!this.resolver) {
      const rows = (
        this.h.db.query("SELECT * FROM ip_aliases WHERE active = 1 ORDER BY created_at, id").all() as Row[]
      ).map(toAlias);
      this.resolver = createAliasResolver(rows);
    }
    return this.resolver(ip, port, captureId);
  }
}
