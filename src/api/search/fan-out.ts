import { t } from "elysia";
import type { VirtualField } from "./filters.ts";
import type { SearchRequest, SearchResult } from "./service.ts";

/**
 * The search of a coordinator over several nodes (docs/ARCHITECTURE.md "Coordinator over several
 * nodes"): what a node answers on `POST /api/v1/search`, what `meta.nodes` says of each node, and
 * the exact merge of the nodes' pages. The HTTP calls live in src/cluster/fan-out.ts.
 */

/** What `meta.nodes` says of one node (or of this process's own lake, named `local`). */
export interface NodeReport {
  name: string;
  /** ok: answered; failed: refused, unreachable or an error; timeout: no answer in time; skipped: not asked (no data in the window, or the same process as another). */
  status: "ok" | "failed" | "timeout" | "skipped";
  rows: number;
  ms: number;
  error?: string;
  /** buffer: another node of the same lake answered for its files; this one gave only its unflushed rows. */
  scope?: "buffer";
}

export const NodeReportSchema = t.Object({
  name: t.String({
    description: "the node's name (coordinator.nodes[].name, else its host:port); local: this process's own lake",
  }),
  status: t.Union([t.Literal("ok"), t.Literal("failed"), t.Literal("timeout"), t.Literal("skipped")], {
    description:
      "ok: answered; failed: refused, unreachable or answered an error; timeout: no answer within its time-out; skipped: not asked (no data in the window, or it is this same process)",
  }),
  rows: t.Integer({ description: "rows the node gave to the merge" }),
  ms: t.Integer({ description: "milliseconds until its answer" }),
  error: t.Optional(t.String({ description: "why it failed, timed out or was skipped" })),
  scope: t.Optional(
    t.Literal("buffer", {
      description:
        "another node of the same lake (same lake_id) answered for its files; this one gave only its rows not yet flushed",
    }),
  ),
});

/** `meta.nodes` and `meta.partial` of an answer over coordinator.nodes (docs/ARCHITECTURE.md "Reads over several nodes"). */
export const NodesMetaMembers = {
  nodes: t.Optional(t.Array(NodeReportSchema, { description: "with coordinator.nodes: what each node did" })),
  partial: t.Optional(t.Boolean({ description: "a node failed or timed out: its part of the answer is missing" })),
};

/** A list search that may span nodes: the result plus, when it did, what each node did. */
export interface ListSearchResult extends SearchResult {
  nodes?: NodeReport[];
  /** Some node failed or timed out: the rows are those of the others. */
  partial?: boolean;
}

export interface ListSearch {
  run(req: SearchRequest): Promise<ListSearchResult>;
}

/** One node's page for the merge: rows newest first (or oldest first), each with its sort key. */
export interface NodePage {
  node: string;
  /** Nodes with the same lake id read the same files: their rows are counted once (by uuid) and their totals not added. */
  lakeId: string;
  items: Record<string, unknown>[];
  sortKeys: Array<[number, string]>;
  total: number;
  totalExact: boolean;
  hasMore: boolean;
}

/** `ORDER BY time DESC, uuid DESC` (the order of src/api/search/newest.ts compareNewest); ascending for oldest first. */
export function compareKeys(a: readonly [number, string], b: readonly [number, string], oldestFirst: boolean): number {
  const d = b[0] - a[0] || (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0);
  return oldestFirst ? -d : d;
}

/**
 * The page [offset, offset + limit) of the union of the nodes' rows in the search's order, each
 * node having sent its first offset + limit rows (the rows of the global page can only be among
 * them). A uuid seen twice (nodes sharing a lake) is one row. `total` adds the totals of distinct
 * lakes (for one lake the largest of its nodes', not exact); `hasMore` is exact: more rows than
 * the page end in the union, or on one node alone.
 */
export function mergeNodePages(pages: readonly NodePage[], offset: number, limit: number, oldestFirst = false) {
  const all: Array<{ key: [number, string]; item: Record<string, unknown>; node: string }> = [];
  for (const p of pages) p.items.forEach((item, i) => all.push({ key: p.sortKeys[i] ?? [0, ""], item, node: p.node }));
  all.sort((a, b) => compareKeys(a.key, b.key, oldestFirst));
  const seen = new Set<string>();
  const unique = all.filter((r) => {
    if (!r.key[1]) return true;
    if (seen.has(r.key[1])) return false;
    seen.add(r.key[1]);
    return true;
  });
  const byLake = new Map<string, NodePage[]>();
  for (const p of pages) byLake.set(p.lakeId, [...(byLake.get(p.lakeId) ?? []), p]);
  let total = 0;
  let totalExact = true;
  for (const group of byLake.values()) {
    total += Math.max(...group.map((p) => p.total));
    if (group.length > 1 || group.some((p) => !p.totalExact)) totalExact = false;
  }
  const end = offset + limit;
  const rows = unique.slice(offset, end);
  return {
    rows,
    total: Math.max(total, unique.length),
    totalExact,
    hasMore: unique.length > end || pages.some((p) => p.hasMore),
  };
}

/** Virtual fields as JSON (the coordinator's mappings, sent to a node). */
export const virtualFieldsJson = (m: ReadonlyMap<string, VirtualField>) => Object.fromEntries(m);

export const VirtualFieldsSchema = t.Optional(
  t.Record(
    t.String(),
    t.Object({
      path: t.String(),
      match: t.Union([t.Literal("like"), t.Literal("equals"), t.Literal("absent"), t.Literal("present")]),
    }),
    {
      description: "the coordinator's virtual fields of the filter (its mappings), by field id",
    },
  ),
);

/**
 * The other reads over several nodes (docs/ARCHITECTURE.md "Reads over several nodes"): a read
 * asks every node's `path` on the node port and this process's lake (`local`), each answer tagged
 * with its node and lake, with the list search's pruning, time-outs and shared-lake rule; the
 * route merges the answers. Implemented by src/cluster/node-fan-out.ts.
 */
export interface NodeAnswer<T> {
  name: string;
  lakeId: string;
  /** Another node of the same lake answered for its files: this answer covers its buffer only. */
  bufferOnly: boolean;
  value: T;
}

export interface Gathered<T> {
  answers: NodeAnswer<T>[];
  nodes: NodeReport[];
  /** Some node failed or timed out: the answer is that of the others. */
  partial: boolean;
}

export interface OverNodesRead<T> {
  /** The read's name in the logs and in svc_node_reads_total{read}. */
  read: string;
  /** The node port's endpoint (POST, JSON). */
  path: string;
  /** The window read (epoch ms): a node whose data cannot reach it is skipped; absent: every node asked. */
  window?: { fromMs: number; toMs: number };
  body: (bufferOnly: boolean) => unknown;
  /** This process's lake, when it has one. */
  local?: () => Promise<T>;
  /** Rows (or cells) of an answer, for meta.nodes. */
  rows: (value: T) => number;
}

export interface OverNodes {
  gather<T>(read: OverNodesRead<T>): Promise<Gathered<T>>;
}

/** meta.nodes and meta.partial of a read over nodes; nothing without nodes. */
export const nodesMeta = (g: Pick<Gathered<unknown>, "nodes" | "partial"> | undefined) =>
  g ? { nodes: g.nodes, partial: g.partial } : {};
