/**
 * What a coordinator knows of each node to prune its reads (docs/ARCHITECTURE.md "Coordinator
 * over several nodes"): its node id, lake id and data span from `POST /api/v1/metadata/check`,
 * kept CHECK_TTL_MS. One cache for the list search and every other read over nodes, so a view
 * that asks for the list, the histogram and the call view checks each node once, and a check
 * in flight is shared by the reads that start meanwhile.
 */
import { postJson } from "./node-post.ts";
import type { ClusterNode } from "./nodes.ts";

export const CHECK_TTL_MS = 5_000;

export interface NodeFacts {
  /** When the check was asked (epoch ms): rows arriving later carry a later time. */
  atMs: number;
  nodeId: string | undefined;
  lakeId: string | undefined;
  /** Oldest and newest row, epoch ms; null: the node holds no rows. */
  minMs: number | null;
  maxMs: number | null;
}

export class NodeFactsCache {
  private readonly known = new Map<string, NodeFacts>();
  private readonly asking = new Map<string, Promise<NodeFacts>>();

  constructor(private readonly ttlMs = CHECK_TTL_MS) {}

  /** The node's facts, asked again when older than the TTL; a failed check is not kept. */
  async of(node: ClusterNode, deadline: number): Promise<NodeFacts> {
    const known = this.known.get(node.url);
    if (known && Date.now() - known.atMs < this.ttlMs) return known;
    const inFlight = this.asking.get(node.url);
    if (inFlight) return await inFlight;
    const ask = this.check(node, deadline).finally(() => this.asking.delete(node.url));
    this.asking.set(node.url, ask);
    return await ask;
  }

  private async check(node: ClusterNode, deadline: number): Promise<NodeFacts> {
    const atMs = Date.now();
    const r = (await postJson(node, "/api/v1/metadata/check", { min_ts: 0, max_ts: 0 }, deadline)) as {
      node_id?: string;
      lake_id?: string;
      node_min_ts: number | null;
      node_max_ts: number | null;
    };
    const ms = (ns: number | null) => (ns === null ? null : Math.floor(ns / 1e6));
    const facts: NodeFacts = {
      atMs,
      nodeId: r.node_id,
      lakeId: r.lake_id,
      minMs: ms(r.node_min_ts),
      maxMs: ms(r.node_max_ts),
    };
    this.known.set(node.url, facts);
    return facts;
  }
}

/**
 * Why a node is not asked: it is this process's own node port, or its data cannot reach the
 * window. Rows arriving after the check carry the time they arrive: only a window that ended
 * before the check can be skipped.
 */
export function skipReason(
  f: NodeFacts,
  self: { nodeId: string } | undefined,
  window: { fromMs: number; toMs: number } | undefined,
): string | undefined {
  if (self && f.nodeId === self.nodeId) return "this coordinator's own node port: its lake is read as local";
  if (!window) return undefined;
  const reaches = f.minMs !== null && f.maxMs !== null && f.minMs <= window.toMs && f.maxMs >= window.fromMs;
  return window.toMs < f.atMs && !reaches ? "no data in the window" : undefined;
}
