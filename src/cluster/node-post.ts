/**
 * The one HTTP call a coordinator makes to a node (docs/ARCHITECTURE.md "Coordinator over several
 * nodes"): POST JSON with the node token, the node's CA and client certificate, within the node's
 * time-out and the request's overall deadline. Both fan-out clients (the list search and the other
 * reads) go through it, so a failure is named the same way everywhere.
 */
import { errorMessage } from "../core/index.ts";
import { nodeFetchOptions, nodeTlsReason } from "./node-tls.ts";
import type { ClusterNode } from "./nodes.ts";

/** A node that did not answer: failed (refused, unreachable, error) or timeout; `badRequest` when it said 400 (the request itself is wrong, the same on every node). */
export class NodeError extends Error {
  constructor(
    readonly status: "failed" | "timeout",
    message: string,
    readonly badRequest: string | false = false,
  ) {
    super(message);
  }
}

/** The response (not yet read), the signal that bounds reading it, and the time it was given. */
export async function postToNode(
  node: ClusterNode,
  path: string,
  body: unknown,
  deadline: number,
): Promise<{ response: Response; signal: AbortSignal; budget: number }> {
  const budget = Math.min(node.timeoutMs, deadline - Date.now());
  if (budget <= 0) throw new NodeError("timeout", "the request's deadline passed before this node was asked");
  const signal = AbortSignal.timeout(budget);
  try {
    const response = await fetch(`${node.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(node.token ? { authorization: `Bearer ${node.token}` } : {}) },
      body: JSON.stringify(body),
      signal,
      // The node's CA and client certificate (docs/ARCHITECTURE.md "Node authentication").
      ...nodeFetchOptions(node),
    });
    return { response, signal, budget };
  } catch (e) {
    if (signal.aborted) throw new NodeError("timeout", `no answer within ${budget} ms`);
    throw new NodeError("failed", `${path}: ${nodeTlsReason(node, errorMessage(e))}`);
  }
}

/** POST JSON and read the JSON answer: NodeError when the node fails, times out or answers an error (a 400's message as `badRequest`). */
export async function postJson(node: ClusterNode, path: string, body: unknown, deadline: number): Promise<unknown> {
  const { response: res, signal, budget } = await postToNode(node, path, body, deadline);
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    if (signal.aborted) throw new NodeError("timeout", `no answer within ${budget} ms`);
    throw new NodeError("failed", `${path}: HTTP ${res.status}, not JSON`);
  }
  if (!res.ok) {
    const m = (json as { message?: unknown } | null)?.message;
    throw new NodeError(
      "failed",
      `${path}: HTTP ${res.status}${typeof m === "string" ? `: ${m}` : ""}`,
      res.status === 400 && typeof m === "string" ? m : false,
    );
  }
  return json;
}
