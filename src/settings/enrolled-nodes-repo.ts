import { nowMs, type SettingsDb } from "./db.ts";

/**
 * Edges that announced themselves to this coordinator (docs/DEPLOY.md "Finding the edges"): name,
 * node URL and node token, `pending` until an administrator approves them (with
 * coordinator.enrollment.approval) or `approved`. The token is kept to call the node and never
 * leaves this repository through `list`.
 */
export type EnrolledStatus = "pending" | "approved";

export interface EnrolledNode {
  name: string;
  url: string;
  status: EnrolledStatus;
  enrolledAt: number;
  lastSeen: number;
  /** Whether the edge sent a node token (the token itself is not listed). */
  hasToken: boolean;
}

interface Row {
  name: string;
  url: string;
  token: string;
  status: string;
  enrolled_at: number;
  last_seen: number;
}

const toNode = (r: Row): EnrolledNode => ({
  name: r.name,
  url: r.url,
  status: r.status === "approved" ? "approved" : "pending",
  enrolledAt: r.enrolled_at,
  lastSeen: r.last_seen,
  hasToken: r.token !== "",
});

/** What an announcement did: the stored entry, or why it was refused. */
export type AnnounceOutcome = { ok: true; node: EnrolledNode } | { ok: false; reason: "name_taken" | "full" };

export class EnrolledNodesRepo {
  constructor(private readonly h: SettingsDb) {}

  /**
   * An edge's announcement: a new name is stored (`approved` unless `approval`); a known name is
   * the same edge only when it presents the node token stored for it, and then its URL is updated
   * (an address change is picked up) and its status kept. `max` caps the entries.
   */
  announce(a: { name: string; url: string; token: string; approval: boolean; max: number }): AnnounceOutcome {
    return this.h.tx(() => {
      const had = this.h.db.query("SELECT * FROM enrolled_nodes WHERE name = ?").get(a.name) as Row | null;
      const now = nowMs();
      if (had) {
        if (had.token !== a.token) return { ok: false, reason: "name_taken" };
        this.h.db.query("UPDATE enrolled_nodes SET url = ?, last_seen = ? WHERE name = ?").run(a.url, now, a.name);
      } else {
        const n = (this.h.db.query("SELECT count(*) AS n FROM enrolled_nodes").get() as { n: number }).n;
        if (n >= a.max) return { ok: false, reason: "full" };
        this.h.db
          .query(
            "INSERT INTO enrolled_nodes (name, url, token, status, enrolled_at, last_seen) VALUES (?, ?, ?, ?, ?, ?)",
          )
          .run(a.name, a.url, a.token, a.approval ? "pending" : "approved", now, now);
      }
      return {
        ok: true,
        node: toNode(this.h.db.query("SELECT * FROM enrolled_nodes WHERE name = ?").get(a.name) as Row),
      };
    });
  }

  /** Every entry by name, without the tokens. */
  list(): EnrolledNode[] {
    return (this.h.db.query("SELECT * FROM enrolled_nodes ORDER BY name").all() as Row[]).map(toNode);
  }

  /** The approved entries with their node tokens: what the fan-out asks. */
  approved(): Array<{ name: string; url: string; token: string }> {
    return (
      this.h.db
        .query("SELECT name, url, token FROM enrolled_nodes WHERE status = 'approved' ORDER BY name")
        .all() as Row[]
    ).map((r) => ({ name: r.name, url: r.url, token: r.token }));
  }

  /** Approves an entry; undefined when there is none of that name. */
  approve(name: string): EnrolledNode | undefined {
    this.h.db.query("UPDATE enrolled_nodes SET status = 'approved' WHERE name = ?").run(name);
    const r = this.h.db.query("SELECT * FROM enrolled_nodes WHERE name = ?").get(name) as Row | null;
    return r ? toNode(r) : undefined;
  }

  /** Removes an entry (out of the fan-out at once); false when there was none. */
  remove(name: string): boolean {
    return this.h.db.query("DELETE FROM enrolled_nodes WHERE name = ?").run(name).changes > 0;
  }
}
