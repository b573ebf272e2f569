export { createNodeApp, type NodeAppDeps } from "./node-app.ts";
export { StreamHub, nodeStreamUrl, type StreamHubOptions } from "./stream-hub.ts";
export { FanOutSearch, type FanOutOptions } from "./fan-out.ts";
export { NodeFactsCache, CHECK_TTL_MS, type NodeFacts } from "./node-facts.ts";
export { clusterNodes, nodeBaseUrl, type ClusterNode } from "./nodes.ts";
export { loadNodeIdentity, bearerMatches, isLoopbackListen, type NodeIdentity } from "./node-identity.ts";
export { NodeFanOut, NodeError, type NodeFanOutOptions } from "./node-fan-out.ts";
export { nodeFetchOptions, nodePortTls } from "./node-tls.ts";

export { ForwardReceiver, type ForwardAnswer } from "./forward-receiver.ts";
