import { nowMs, type SettingsDb } from "./db.ts";
import { addEquals, emptyFilter, likeContains, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

/** Capture agents seen by ingest: one row per (node id, source address). */
export interface Agent {
  nodeId: string;
  nodeName: string;
  ip: string;
  firstSeen: number;
  lastSeen: number;
  packets: number;
}

/** One observation from the ingest pipeline; `packets` is the count since its previous report. */
export interface AgentSeen {
  nodeId: string;
  nodeName: string;
  ip: string;
  packets: number;
  lastSeenMs: number;
}

interface Row {
  node_id: string;
  node_name: string;
  ip: string;
  first_seen: number;
  last_seen: number;
  packets: number;
}

const toAgent = (r: Row): Agent => ({
  nodeId: r.node_id,
  nodeName: r.node_name,
  ip: r.ip,
  firstSeen: r.first_seen,
  lastSeen: r.last_seen,
  packets: r.packets,
});

export const AGENT_SORTS = {
  node_id: "node_id",
  node_name: "node_name",
  ip: "ip",
  last_seen: "last_seen",
  packets: "packets",
} as const;

export class AgentsRepo {
  constructor(private readonly h: SettingsDb) {}

  /**
   * Upserts a batch in one transaction (the ingest pipeline calls this every few seconds with an
   * aggregate per agent, never per packet): packets add up, `last_seen` only moves forward, a
   * non-empty node name replaces the stored one.
   */
  recordSeen(batch: readonly AgentSeen[]): void {
    if (batch.length === 0) return;
    const stmt = this.h.db.query(
      `INSERT INTO agents (node_id, ip, node_name, first_seen, last_seen, packets) VALUES ($node, $ip, $name, $seen, $seen, $packets)
       ON CONFLICT (node_id, ip) DO UPDATE SET
         node_name = CASE WHEN excluded.node_name <> '' THEN excluded.node_name ELSE agents.node_name END,
         last_seen = MAX(agents.last_seen, excluded.last_seen),
         first_seen = MIN(agents.first_seen, excluded.first_seen),
         packets = agents.packets + excluded.packets`,
    );
    this.h.tx(() => {
      for (const a of batch) {
        stmt.run({
          node: a.nodeId,
          ip: a.ip,
          name: a.nodeName,
          seen: Math.trunc(a.lastSeenMs),
          packets: Math.max(0, Math.trunc(a.packets)),
        });
      }
    });
  }

  list(filters: { nodeId?: string | undefined }, paging: PageInput): Page<Agent> {
    const page = pageRequest(paging, AGENT_SORTS, "-last_seen");
    const f = emptyFilter();
    addEquals(f, "node_id", filters.nodeId);
    if (page.search) {
      f.where.push("(node_id LIKE $q ESCAPE '\\' OR node_name LIKE $q ESCAPE '\\' OR ip LIKE $q ESCAPE '\\')");
      f.params.q = likeContains(page.search);
    }
    return queryPage<Row, Agent>(this.h.db, "agents", f, page, AGENT_SORTS, toAgent, ["node_id", "ip"]);
  }

  delete(nodeId: string, ip: string): boolean {
    return (
      this.h.db.query("DELETE FROM agents WHERE node_id = $node AND ip = $ip").run({ node: nodeId, ip }).changes > 0
    );
  }

  /** Drops agents not seen for `olderThanMs` (housekeeping). */
  prune(olderThanMs: number, now = nowMs()): number {
    return this.h.db.query("DELETE FROM agents WHERE last_seen < $cut").run({ cut: now - olderThanMs }).changes;
  }
}
