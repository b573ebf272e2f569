import type { Config } from "../config/index.ts";
import { clientTlsOptions, loadServerTls } from "../core/index.ts";
import type { ClusterNode } from "./nodes.ts";

/**
 * The client side of TLS on the node port (docs/ARCHITECTURE.md "Node authentication"): every
 * request a coordinator makes to a node, and its /stream WebSocket, verifies an https:// node
 * against the entry's `ca` (else the system's CAs) and presents `cert` + `key` when the entry has
 * them (a node with node.http_server.cacert refuses a connection without). Spread into the options
 * of fetch (`{ ...nodeFetchOptions(node) }`) or of `new WebSocket(url, …)`; both take Bun's `tls`.
 */
export function nodeFetchOptions(node: Pick<ClusterNode, "ca" | "cert" | "key">): {
  tls?: { ca?: string; cert?: string; key?: string };
} {
  return clientTlsOptions(node);
}

/**
 * The node port's server side: HTTPS with node.http_server.cert + key, and client certificates
 * required and verified with cacert (mutual TLS). The files are read and checked now, so a missing
 * file or a key of another certificate stops the start naming the key (src/core/tls-files.ts);
 * the paths are what createHttpModule hands to Bun.
 */
export function nodePortTls(hs: Config["node"]["http_server"]): { cert: string; key: string; ca?: string } | undefined {
  return loadServerTls(hs, "node.http_server")
    ? { cert: hs.cert, key: hs.key, ...(hs.cacert ? { ca: hs.cacert } : {}) }
    : undefined;
}

/**
 * A failed call's reason with what to check on the coordinator's side: Bun reports a client
 * certificate the node refused as a failed handshake ("Does the server speak TLS on this port?"),
 * and an unverified node certificate without naming the CA (docs/ARCHITECTURE.md "Node
 * authentication").
 */
export function nodeTlsReason(node: Pick<ClusterNode, "url" | "ca" | "cert">, message: string): string {
  if (!node.url.startsWith("https:")) return message;
  if (/handshake/i.test(message) && !node.cert)
    return `${message} (a node with node.http_server.cacert needs a client certificate: coordinator.nodes[].cert and key)`;
  if (/certificate|verify|issuer/i.test(message) && !node.ca)
    return `${message} (the node's certificate is checked against the system's CAs: set coordinator.nodes[].ca to its CA)`;
  return message;
}
