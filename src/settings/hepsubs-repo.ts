import { AppError } from "../core/index.ts";
import { newId, nowMs, parseJsonColumn, type SettingsDb } from "./db.ts";
import { addEquals, emptyFilter, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

/** HEP subscriptions (docs/ADMIN.md "HEP subscriptions"): per (hepid, profile) a mapping document. */
export interface HepSub {
  id: string;
  hepid: number;
  profile: string;
  hepAlias: string;
  version: number;
  mapping: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export type HepSubInput = Pick<HepSub, "hepid" | "profile"> & Partial<Pick<HepSub, "hepAlias" | "version" | "mapping">>;

interface Row {
  id: string;
  hepid: number;
  profile: string;
  hep_alias: string;
  version: number;
  mapping: string;
  created_at: number;
  updated_at: number;
}

const toHepSub = (r: Row): HepSub => ({
  id: r.id,
  hepid: r.hepid,
  profile: r.profile,
  hepAlias: r.hep_alias,
  version: r.version,
  mapping: parseJsonColumn<Record<string, unknown>>(r.mapping, {}),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const HEPSUB_SORTS = {
  hepid: "hepid",
  profile: "profile",
  hep_alias: "hep_alias",
  created_at: "created_at",
} as const;

const conflict = (e: unknown, s: Pick<HepSub, "hepid" | "profile">): never => {
  if (String((e as Error).message).includes("UNIQUE")) {
    throw new AppError("CONFLICT", `a HEP subscription for hepid ${s.hepid} profile "${s.profile}" already exists`, {
      details: { fields: ["hepid", "profile"] },
    });
  }
  throw e;
};

export class HepSubsRepo {
  constructor(private readonly h: SettingsDb) {}

  list(
    filters: { hepid?: number | undefined; profile?: string | undefined; hepAlias?: string | undefined },
    paging: PageInput,
  ): Page<HepSub> {
    const page = pageRequest(paging, HEPSUB_SORTS, "hepid");
    const f = emptyFilter();
    addEquals(f, "hepid", filters.hepid);
    addEquals(f, "profile", filters.profile);
    addEquals(f, "hep_alias", filters.hepAlias);
    return queryPage<Row, HepSub>(this.h.db, "hep_subscriptions", f, page, HEPSUB_SORTS, toHepSub);
  }

  get(id: string): HepSub | undefined {
    const r = this.h.db.query("SELECT * FROM hep_subscriptions WHERE id = $id").get({ id }) as Row | null;
    return r ? toHepSub(r) : undefined;
  }

  create(s: HepSubInput): HepSub {
    const id = newId();
    const now = nowMs();
    try {
      this.h.db
        .query(
          `INSERT INTO hep_subscriptions (id, hepid, profile, hep_alias, version, mapping, created_at, updated_at)
           VALUES ($id, $hepid, $profile, $alias, $version, $mapping, $now, $now)`,
        )
        .run({
          id,
          hepid: s.hepid,
          profile: s.profile,
          alias: s.hepAlias ?? "",
          version: s.version ?? 1,
          mapping: JSON.stringify(s.mapping ?? {}),
          now,
        });
    } catch (e) {
      conflict(e, s);
    }
    return this.get(id)!;
  }

  update(id: string, s: HepSubInput): HepSub | undefined {
    const cur = this.get(id);
    if (!cur) return undefined;
    try {
      this.h.db
        .query(
          `UPDATE hep_subscriptions SET hepid = $hepid, profile = $profile, hep_alias = $alias, version = $version, mapping = $mapping, updated_at = $now
           WHERE id = $id`,
        )
        .run({
          id,
          hepid: s.hepid,
          profile: s.profile,
          alias: s.hepAlias ?? cur.hepAlias,
          version: s.version ?? cur.version,
          mapping: JSON.stringify(s.mapping ?? cur.mapping),
          now: nowMs(),
        });
    } catch (e) {
      conflict(e, s);
    }
    return this.get(id);
  }

  delete(id: string): boolean {
    return this.h.db.query("DELETE FROM hep_subscriptions WHERE id = $id").run({ id }).changes > 0;
  }
}
