import {
  mergeNodePages,
  virtualFieldsJson,
  virtualFieldsOf,
  type ListSearch,
  type ListSearchResult,
  type NodePage,
  type NodeReport,
  type SearchRequest,
  type SearchService,
  type SearchSettings,
} from "../api/index.ts";
import { AppError, errorMessage, type Counter, type Logger, type MetricsRegistry } from "../core/index.ts";
import { NodeFactsCache, skipReason, type NodeFacts } from "./node-facts.ts";
import { NodeError, postJson } from "./node-post.ts";
import { currentNodes, type ClusterNode, type NodeSource } from "./nodes.ts";
import { runInLakeOrder, withFilesFailover, type LakeAsk } from "./lake-order.ts";

/**
 * `POST /transactions/search` of a coordinator over several nodes (docs/ARCHITECTURE.md
 * "Coordinator over several nodes"). Every node of coordinator.nodes, and this process's lake when
 * it has one, is asked for the first offset + limit rows of the order at once, each with its own
 * time-out inside the request's deadline (coordinator.query_timeout_sec); the pages are merged
 * exactly (src/api/search/fan-out.ts). A node that fails or times out is named in meta.nodes and
 * the answer is `partial`; a node whose data (POST /api/v1/metadata/check, kept CHECK_TTL_MS)
 * cannot reach the window is `skipped`, and so is a node that is this very process (same node id).
 */

export interface FanOutOptions {
  /** coordinator.nodes, with the enrolled edges when enrolment is on (read at each search). */
  nodes: NodeSource;
  /** This process's lake search, when it has a lake. */
  local?: SearchService;
  /** This process's node and lake id (src/cluster/node-identity.ts), when it has a lake. */
  self?: { nodeId: string; lakeId: string };
  /** The coordinator's settings: virtual fields sent to nodes, aliases named on their rows. */
  settings: SearchSettings;
  deadlineMs: number;
  logger: Logger;
  metrics: MetricsRegistry;
  /** The nodes' facts, shared with the other reads over nodes (node-facts.ts); a cache of its own without. */
  facts?: NodeFactsCache;
}

type Outcome = { page: NodePage; report: NodeReport } | { report: NodeReport; badRequest?: string };

export class FanOutSearch implements ListSearch {
  private readonly facts: NodeFactsCache;
  private readonly answers: Counter<"node" | "status">;

  constructor(private readonly o: FanOutOptions) {
    this.facts = o.facts ?? new NodeFactsCache();
    this.answers = o.metrics.counter(
      "svc_search_node_answers_total",
      "Fanned-out searches per node (local: this process's lake) and outcome: ok, failed, timeout, skipped.",
      ["node", "status"],
    );
  }

  async run(req: SearchRequest): Promise<ListSearchResult> {
    const started = Date.now();
    const deadline = started + this.o.deadlineMs;
    const offset = req.offset ?? 0;
    const want = { ...req, offset: 0, limit: offset + req.limit };
    const virtualFields =
      req.protoType >= 200 ? new Map() : virtualFieldsOf(this.o.settings, req.protoType, req.eventType || "call");
    // Each node's ids and data span first (kept CHECK_TTL_MS), so that nodes of one lake are told apart.
    const list = currentNodes(this.o.nodes);
    const facts = await Promise.all(
      list.map((n) =>
        this.facts.of(n, deadline).then(
          (f) => f,
          (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
        ),
      ),
    );
    const owners = new Set<string>(this.o.self && this.o.local ? [this.o.self.lakeId] : []);
    const asked = new Map<string, string>();
    const asks: LakeAsk<Outcome>[] = this.o.local
      ? [{ lakeId: this.o.self?.lakeId, bufferOnly: false, run: () => this.askLocal(want, deadline) }]
      : [];
    const done = (o: Outcome): LakeAsk<Outcome> => ({
      lakeId: undefined,
      bufferOnly: false,
      run: () => Promise.resolve(o),
    });
    for (const [i, n] of list.entries()) {
      const f = facts[i]!;
      if (f instanceof Error) {
        asks.push(
          done({ report: this.report(n.name, started, f instanceof NodeError ? f.status : "failed", errorMessage(f)) }),
        );
        continue;
      }
      const twin = f.nodeId === undefined ? undefined : asked.get(f.nodeId);
      if (f.nodeId !== undefined && !twin) asked.set(f.nodeId, n.name);
      const skip = twin ? `the same node as ${twin} (listed twice)` : skipReason(f, this.o.self, req);
      if (skip) {
        asks.push(done({ report: this.report(n.name, started, "skipped", skip) }));
        continue;
      }
      // The first node of a lake reads its files and buffer; another node of the same lake only its own buffer.
      const bufferOnly = f.lakeId !== undefined && owners.has(f.lakeId);
      if (f.lakeId !== undefined) owners.add(f.lakeId);
      const ask = (only: boolean) => () =>
        this.askNode(n, f, { ...want, virtualFields, bufferOnly: only }, deadline, started);
      asks.push({ lakeId: f.lakeId, bufferOnly, run: ask(bufferOnly), ...(bufferOnly ? { whole: ask(false) } : {}) });
    }
    // The files of a shared lake are read after its nodes' buffers (src/cluster/lake-order.ts).
    // A lake whose files reader failed: another node of it that answered reads them (src/cluster/lake-order.ts).
    const outcomes = await withFilesFailover(asks, await Promise.all(runInLakeOrder(asks)), (o) => "page" in o);
    const pages = outcomes.flatMap((o) => ("page" in o ? [o.page] : []));
    // No node answered and one refused the request as malformed (400): the client's mistake, answered
    // as such (the others being down does not make it right). A node that answers makes it partial.
    const refusals = outcomes.flatMap((o) => ("badRequest" in o && o.badRequest ? [o.badRequest] : []));
    if (pages.length === 0 && refusals.length > 0) {
      throw new AppError("VALIDATION", refusals[0]!);
    }
    const nodes = outcomes.map((o) => o.report);
    for (const r of nodes) this.answers.inc({ node: r.name, status: r.status });
    for (const r of nodes)
      if (r.status === "failed" || r.status === "timeout")
        this.o.logger.warn("search: a node did not answer", { ...r });
    const merged = mergeNodePages(pages, offset, req.limit, req.oldestFirst === true);
    const items = merged.rows.map((r, i) => this.named(r.item, r.node, offset + i));
    const first = pages.find((p) => p.items.length > 0)?.items[0];
    return {
      items,
      keys: items[0] ? Object.keys(items[0]) : first ? Object.keys(first) : [],
      limit: req.limit,
      offset,
      total: merged.total,
      totalExact: merged.totalExact,
      hasMore: merged.hasMore,
      table: null,
      nodes,
      partial: nodes.some((r) => r.status === "failed" || r.status === "timeout"),
    };
  }

  /** A merged row: its position, the node it came from, and aliases by this coordinator's settings (a node has none). */
  private named(item: Record<string, unknown>, node: string, i: number): Record<string, unknown> {
    const out: Record<string, unknown> = { ...item, id: i + 1, node };
    const int = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const captureId = int(item.capture_id);
    if (node !== "local") {
      if (typeof item.src_ip === "string")
        out.src_alias = this.o.settings.aliases.resolveAlias(item.src_ip, int(item.src_port), captureId) ?? null;
      if (typeof item.dst_ip === "string")
        out.dst_alias = this.o.settings.aliases.resolveAlias(item.dst_ip, int(item.dst_port), captureId) ?? null;
    }
    return out;
  }

  private async askLocal(req: SearchRequest, deadline: number): Promise<Outcome> {
    const t0 = Date.now();
    const local = this.o.local!;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const late = new Promise<never>((_r, reject) => {
        timer = setTimeout(
          () => reject(new NodeError("timeout", `no answer within ${deadline - t0} ms`)),
          Math.max(0, deadline - t0),
        );
      });
      const r = await Promise.race([local.run(req), late]);
      const ms = Date.now() - t0;
      const page: NodePage = {
        node: "local",
        lakeId: this.o.self?.lakeId ?? "local",
        items: r.items,
        sortKeys: r.sortKeys ?? [],
        total: r.total,
        totalExact: r.totalExact,
        hasMore: r.hasMore,
      };
      return { page, report: { name: "local", status: "ok", rows: r.items.length, ms } };
    } catch (e) {
      // A client's mistake (a bad filter) is the same on every node: it is the answer.
      if (e instanceof AppError && ["VALIDATION", "BAD_REQUEST", "CONFLICT", "PAYLOAD_TOO_LARGE"].includes(e.code))
        throw e;
      const status = e instanceof NodeError ? e.status : "failed";
      return { report: { name: "local", status, rows: 0, ms: Date.now() - t0, error: errorMessage(e) } };
    } finally {
      clearTimeout(timer);
    }
  }

  private report(name: string, t0: number, status: NodeReport["status"], error?: string, rows = 0): NodeReport {
    return { name, status, rows, ms: Date.now() - t0, ...(error ? { error } : {}) };
  }

  private async askNode(
    node: ClusterNode,
    facts: NodeFacts,
    req: SearchRequest,
    deadline: number,
    t0: number,
  ): Promise<Outcome> {
    try {
      const body = {
        filter: { ...req.filter, proto_type: req.protoType, event_type: req.eventType },
        timestamp: { from: req.fromMs, to: req.toMs },
        param: { limit: req.limit, sort: req.oldestFirst ? "timestamp" : "-timestamp" },
        virtual_fields: virtualFieldsJson(req.virtualFields ?? new Map()),
        ...(req.bufferOnly ? { buffer_only: true } : {}),
      };
      const r = (await postJson(node, "/api/v1/search", body, deadline)) as {
        data: { items: Record<string, unknown>[]; sort_keys: Array<[number, string]> };
        meta: { pagination: { total: number; total_exact: boolean; has_more: boolean } };
        node?: { lake_id?: string };
      };
      const p = r.meta.pagination;
      const lakeId = r.node?.lake_id ?? facts.lakeId ?? node.url;
      const page: NodePage = {
        node: node.name,
        // A buffer of a shared lake holds rows of its own: its total adds to the lake's.
        lakeId: req.bufferOnly ? `${lakeId}#buffer#${node.name}` : lakeId,
        items: r.data.items,
        sortKeys: r.data.sort_keys,
        total: p.total,
        totalExact: p.total_exact,
        hasMore: p.has_more,
      };
      return {
        page,
        report: {
          ...this.report(node.name, t0, "ok", undefined, r.data.items.length),
          ...(req.bufferOnly ? { scope: "buffer" as const } : {}),
        },
      };
    } catch (e) {
      return {
        report: this.report(node.name, t0, e instanceof NodeError ? e.status : "failed", errorMessage(e)),
        ...(e instanceof NodeError && e.badRequest ? { badRequest: e.badRequest } : {}),
      };
    }
  }
}
