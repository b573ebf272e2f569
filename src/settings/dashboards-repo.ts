import { newId, nowMs, parseJsonColumn, type SettingsDb } from "./db.ts";
import { defaultDashboards, type DashboardDraft, type Widget } from "./default-dashboards.ts";
import { emptyFilter, likeContains, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

export interface Dashboard extends DashboardDraft {
  id: string;
  username: string;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  username: string;
  name: string;
  position: number;
  layout: string;
  created_at: number;
  updated_at: number;
}

const toDashboard = (r: Row): Dashboard => ({
  id: r.id,
  username: r.username,
  name: r.name,
  position: r.position,
  layout: parseJsonColumn<Widget[]>(r.layout, []),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const DASHBOARD_SORTS = {
  position: "position",
  name: "name",
  created_at: "created_at",
  updated_at: "updated_at",
} as const;

/** Dashboards belong to one user; every read and write is scoped by `username`. */
export class DashboardsRepo {
  constructor(
    private readonly h: SettingsDb,
    private readonly opts: { games: boolean },
  ) {}

  /** Lists a user's dashboards; an empty list (first login) is seeded with the defaults first. */
  list(username: string, paging: PageInput): Page<Dashboard> {
    const page = pageRequest(paging, DASHBOARD_SORTS, "position");
    this.h.tx(() => {
      if (this.count(username) === 0) this.insertDefaults(username);
    });
    const f = emptyFilter();
    f.where.push("username = $username");
    f.params.username = username;
    if (page.search) {
      f.where.push("name LIKE $q ESCAPE '\\'");
      f.params.q = likeContains(page.search);
    }
    return queryPage<Row, Dashboard>(this.h.db, "dashboards", f, page, DASHBOARD_SORTS, toDashboard);
  }

  count(username: string): number {
    return (
      this.h.db.query("SELECT COUNT(*) AS n FROM dashboards WHERE username = $username").get({ username }) as {
        n: number;
      }
    ).n;
  }

  get(username: string, id: string): Dashboard | undefined {
    const r = this.h.db
      .query("SELECT * FROM dashboards WHERE id = $id AND username = $username")
      .get({ id, username }) as Row | null;
    return r ? toDashboard(r) : undefined;
  }

  create(username: string, d: DashboardDraft): Dashboard {
    const id = newId();
    const now = nowMs();
    this.h.db
      .query(
        "INSERT INTO dashboards (id, username, name, position, layout, created_at, updated_at) VALUES ($id, $username, $name, $position, $layout, $now, $now)",
      )
      .run({ id, username, name: d.name, position: d.position, layout: JSON.stringify(d.layout), now });
    return this.get(username, id)!;
  }

  update(username: string, id: string, d: DashboardDraft): Dashboard | undefined {
    const r = this.h.db
      .query(
        "UPDATE dashboards SET name = $name, position = $position, layout = $layout, updated_at = $now WHERE id = $id AND username = $username",
      )
      .run({ id, username, name: d.name, position: d.position, layout: JSON.stringify(d.layout), now: nowMs() });
    return r.changes > 0 ? this.get(username, id) : undefined;
  }

  delete(username: string, id: string): boolean {
    return (
      this.h.db.query("DELETE FROM dashboards WHERE id = $id AND username = $username").run({ id, username }).changes >
      0
    );
  }

  /** `POST /me/dashboards/reset`: the user's dashboards are replaced by the defaults. */
  reset(username: string): Dashboard[] {
    this.h.tx(() => {
      this.h.db.query("DELETE FROM dashboards WHERE username = $username").run({ username });
      this.insertDefaults(username);
    });
    return (
      this.h.db
        .query("SELECT * FROM dashboards WHERE username = $username ORDER BY position, id")
        .all({ username }) as Row[]
    ).map(toDashboard);
  }

  private insertDefaults(username: string): void {
    for (const d of defaultDashboards(this.opts)) this.create(username, d);
  }
}
