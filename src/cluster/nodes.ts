import type { Config } from "../config/index.ts";
import { AppError, loadClientTls, type Logger } from "../core/index.ts";

/**
 * The nodes a coordinator searches and streams from (docs/ARCHITECTURE.md "Coordinator over several
 * nodes"): `coordinator.nodes`, URLs or objects, with `coordinator.hep_stream.nodes` folded in (the
 * older key of the live stream's fan-in, docs/STREAM.md) and a warning naming it.
 */
export interface ClusterNode {
  /** In meta.nodes and the logs: the configured name, else host:port. */
  name: string;
  /** Base URL of the node port, `http(s)://host:port` without a trailing slash. */
  url: string;
  token?: string;
  /** PEM text of the CA that verifies an https:// node (else the system's CAs). */
  ca?: string;
  /** PEM text of the client certificate and its key, for a node requiring one (mutual TLS; src/cluster/node-tls.ts). */
  cert?: string;
  key?: string;
  timeoutMs: number;
}

type NodeEntry = Config["coordinator"]["nodes"][number];

/** `http://h:p`, `h:p`, or a `ws(s)://h:p/stream` of the stream's node list → `http(s)://h:p`; CONFIG_INVALID naming `key` otherwise. */
export function nodeBaseUrl(raw: string, key: string): URL {
  const text = raw.trim();
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    throw new AppError("CONFIG_INVALID", `${key}: "${raw}" is not a URL or host:port of a node port`);
  }
  const scheme = { "http:": "http:", "https:": "https:", "ws:": "http:", "wss:": "https:" }[u.protocol];
  if (!scheme || !u.port)
    throw new AppError(
      "CONFIG_INVALID",
      `${key}: "${raw}" must be http(s)://host:port of a node port (node.http_server.listen)`,
    );
  const path = u.pathname.replace(/\/+$/, "").replace(/\/stream$/, "");
  return new URL(`${scheme}//${u.host}${path}`);
}

export function clusterNodes(c: Config["coordinator"], logger: Logger): ClusterNode[] {
  const out: ClusterNode[] = [];
  const add = (entry: NodeEntry, key: string) => {
    const e = typeof entry === "string" ? { url: entry } : entry;
    const u = nodeBaseUrl(e.url, `${key}.url`);
    const url = u.href.replace(/\/+$/, "");
    if (out.some((n) => n.url === url)) return;
    // TLS material only for https://: over plain HTTP it would do nothing (docs/STYLE.md "Configuration").
    const tlsKey = typeof entry === "string" ? undefined : (["ca", "cert", "key"] as const).find((k) => entry[k]);
    if (tlsKey && u.protocol !== "https:")
      throw new AppError(
        "CONFIG_INVALID",
        `${key}.${tlsKey}: the node's url is ${u.protocol}//, so no TLS is spoken; use https:// (node.http_server.cert and key on the node)`,
      );
    const tls = typeof entry === "string" ? {} : loadClientTls(entry, key);
    const name = e.name ?? u.host;
    if (out.some((n) => n.name === name))
      throw new AppError("CONFIG_INVALID", `${key}.name: "${name}" names two nodes; give each a name of its own`);
    out.push({
      name,
      url,
      timeoutMs: e.timeout_ms ?? c.node_timeout_ms,
      ...(e.token ? { token: e.token } : {}),
      ...tls,
    });
  };
  c.nodes.forEach((n, i) => add(n, `coordinator.nodes[${i}]`));
  if (c.hep_stream.nodes.length > 0) {
    logger.warn(
      "coordinator.hep_stream.nodes is folded into coordinator.nodes: list the nodes there (they are searched and streamed from)",
      { nodes: c.hep_stream.nodes },
    );
    c.hep_stream.nodes.forEach((n, i) => add(n, `coordinator.hep_stream.nodes[${i}]`));
  }
  return out;
}

/**
 * The nodes a fan-out asks: a fixed list (coordinator.nodes), or a function read at each request,
 * so that edges enrolled meanwhile are asked too (docs/DEPLOY.md "Finding the edges").
 */
export type NodeSource = readonly ClusterNode[] | (() => readonly ClusterNode[]);

export const currentNodes = (s: NodeSource): readonly ClusterNode[] => (typeof s === "function" ? s() : s);
