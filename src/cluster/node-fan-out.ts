import type { Gathered, NodeAnswer, NodeReport, OverNodes, OverNodesRead } from "../api/index.ts";
import { AppError, errorMessage, type Counter, type Logger, type MetricsRegistry } from "../core/index.ts";
import { currentNodes, type ClusterNode, type NodeSource } from "./nodes.ts";
import { NodeFactsCache, skipReason } from "./node-facts.ts";
import { NodeError, postJson, postToNode } from "./node-post.ts";
import { runInLakeOrder, withFilesFailover, type LakeAsk } from "./lake-order.ts";

export { NodeError };

/**
 * The reads of a coordinator over several nodes besides the list search (docs/ARCHITECTURE.md
 * "Reads over several nodes"): one question to every node of coordinator.nodes and to this
 * process's lake, with the list search's rules — each node within its own time-out and the
 * request's deadline, a node whose data cannot reach the window skipped (POST
 * /api/v1/metadata/check, kept CHECK_TTL_MS), this process's own node port and a node listed twice
 * skipped, and of the nodes of one lake (same lake_id) the first asked for the files and its
 * buffer, every other one for its buffer only. What each node did is a NodeReport (meta.nodes).
 */

export interface NodeFanOutOptions {
  /** coordinator.nodes, with the enrolled edges when enrolment is on (read at each read). */
  nodes: NodeSource;
  /** This process's node and lake id, when it has a lake. */
  self?: { nodeId: string; lakeId: string };
  deadlineMs: number;
  logger: Logger;
  metrics: MetricsRegistry;
  /** The nodes' facts, shared with the list search (node-facts.ts); a cache of its own without. */
  facts?: NodeFactsCache;
}

/** A client's mistake found by this process's lake: the same on every node, so it is the answer. */
const CLIENT_CODES = [
  "VALIDATION",
  "BAD_REQUEST",
  "CONFLICT",
  "PAYLOAD_TOO_LARGE",
  "NOT_FOUND",
  "SQL_FORBIDDEN",
  "SQL_INVALID",
];

export class NodeFanOut implements OverNodes {
  private readonly facts: NodeFactsCache;
  private readonly answers: Counter<"read" | "node" | "status">;

  constructor(readonly o: NodeFanOutOptions) {
    this.facts = o.facts ?? new NodeFactsCache();
    this.answers = o.metrics.counter(
      "svc_node_reads_total",
      "Reads fanned out to nodes (besides the list search) per read, node (local: this process's lake) and outcome: ok, failed, timeout, skipped.",
      ["read", "node", "status"],
    );
  }

  get nodes(): readonly ClusterNode[] {
    return currentNodes(this.o.nodes);
  }

  /** Asks every node (and the local lake) at once; never throws for a node, only for the client's mistake. */
  async gather<T>(req: OverNodesRead<T>): Promise<Gathered<T>> {
    const started = Date.now();
    const deadline = started + this.o.deadlineMs;
    const list = currentNodes(this.o.nodes);
    const facts = await Promise.all(
      list.map((n) =>
        this.facts.of(n, deadline).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))),
      ),
    );
    const owners = new Set<string>(this.o.self && req.local ? [this.o.self.lakeId] : []);
    const asked = new Map<string, string>();
    const local = req.local;
    const asks: LakeAsk<Outcome<T>>[] = local
      ? [
          {
            lakeId: this.o.self?.lakeId,
            bufferOnly: false,
            run: () => this.timed("local", local, deadline, started, req.rows),
          },
        ]
      : [];
    const done = (o: Outcome<T>): LakeAsk<Outcome<T>> => ({
      lakeId: undefined,
      bufferOnly: false,
      run: () => Promise.resolve(o),
    });
    for (const [i, n] of list.entries()) {
      const f = facts[i]!;
      if (f instanceof Error) {
        asks.push(
          done({ report: report(n.name, started, f instanceof NodeError ? f.status : "failed", errorMessage(f)) }),
        );
        continue;
      }
      const twin = f.nodeId === undefined ? undefined : asked.get(f.nodeId);
      if (f.nodeId !== undefined && !twin) asked.set(f.nodeId, n.name);
      const skip = twin ? `the same node as ${twin} (listed twice)` : skipReason(f, this.o.self, req.window);
      if (skip) {
        asks.push(done({ report: report(n.name, started, "skipped", skip) }));
        continue;
      }
      const bufferOnly = f.lakeId !== undefined && owners.has(f.lakeId);
      if (f.lakeId !== undefined) owners.add(f.lakeId);
      const lakeId = f.lakeId ?? n.url;
      const ask = (only: boolean) => () =>
        this.timed(
          n.name,
          async () => (await this.call(n, req.path, req.body(only), deadline)) as T,
          deadline,
          started,
          req.rows,
        ).then((o) =>
          "answer" in o
            ? {
                ...o,
                answer: { ...o.answer, lakeId, bufferOnly: only },
                report: { ...o.report, ...(only ? { scope: "buffer" as const } : {}) },
              }
            : o,
        );
      asks.push({ lakeId: f.lakeId, bufferOnly, run: ask(bufferOnly), ...(bufferOnly ? { whole: ask(false) } : {}) });
    }
    // The files of a shared lake are read after its nodes' buffers (src/cluster/lake-order.ts).
    // A lake whose files reader failed: another node of it that answered reads them (src/cluster/lake-order.ts).
    const outcomes = await withFilesFailover(asks, await Promise.all(runInLakeOrder(asks)), (o) => "answer" in o);
    const answers = outcomes.flatMap((o) => ("answer" in o ? [o.answer] : []));
    const refusals = outcomes.flatMap((o) => ("badRequest" in o && o.badRequest ? [o.badRequest] : []));
    if (answers.length === 0 && refusals.length > 0) throw new AppError("VALIDATION", refusals[0]!);
    const nodes = outcomes.map((o) => o.report);
    for (const r of nodes) this.answers.inc({ read: req.read, node: r.name, status: r.status });
    for (const r of nodes)
      if (r.status === "failed" || r.status === "timeout")
        this.o.logger.warn(`${req.read}: a node did not answer`, { ...r });
    return { answers, nodes, partial: nodes.some((r) => r.status === "failed" || r.status === "timeout") };
  }

  private async timed<T>(
    name: string,
    run: () => Promise<T>,
    deadline: number,
    t0: number,
    rows: (v: T) => number,
  ): Promise<Outcome<T>> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const late = new Promise<never>((_r, reject) => {
        timer = setTimeout(
          () => reject(new NodeError("timeout", `no answer within ${deadline - t0} ms`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      const value = await Promise.race([run(), late]);
      const lakeId = name === "local" ? (this.o.self?.lakeId ?? "local") : "";
      return {
        answer: { name, lakeId, bufferOnly: false, value },
        report: report(name, t0, "ok", undefined, rows(value)),
      };
    } catch (e) {
      if (name === "local" && e instanceof AppError && CLIENT_CODES.includes(e.code)) throw e;
      return {
        report: report(name, t0, e instanceof NodeError ? e.status : "failed", errorMessage(e)),
        ...(e instanceof NodeError && e.badRequest ? { badRequest: e.badRequest } : {}),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** POST JSON with the node's token, within its time-out and the request's deadline. */
  async call(node: ClusterNode, path: string, body: unknown, deadline: number): Promise<unknown> {
    return await postJson(node, path, body, deadline);
  }

  /** POST for a binary answer (a PCAP): the bytes, or NodeError. */
  async callBytes(node: ClusterNode, path: string, body: unknown, deadline: number): Promise<Uint8Array> {
    const res = await postToNode(node, path, body, deadline);
    try {
      if (!res.response.ok) {
        const text = await res.response.text();
        throw new NodeError("failed", `${path}: HTTP ${res.response.status}: ${text.slice(0, 200)}`);
      }
      return new Uint8Array(await res.response.arrayBuffer());
    } catch (e) {
      if (res.signal.aborted) throw new NodeError("timeout", `no answer within ${res.budget} ms`);
      throw e instanceof NodeError ? e : new NodeError("failed", `${path}: ${errorMessage(e)}`);
    }
  }
}

type Outcome<T> = { answer: NodeAnswer<T>; report: NodeReport } | { report: NodeReport; badRequest?: string };

function report(name: string, t0: number, status: NodeReport["status"], error?: string, rows = 0): NodeReport {
  return { name, status, rows, ms: Date.now() - t0, ...(error ? { error } : {}) };
}
