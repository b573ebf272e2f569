export { createNodeApp, type NodeAppDeps } from "./node-app.ts";
export { StreamHub, nodeStreamUrl, type StreamHubOptions } from "./stream-hub.ts";
export { FanOutSearch, type FanOutOptions } from "./fan-out.ts";
export { NodeFactsCache, CHECK_TTL_MS, type NodeFacts } from "./node-facts.ts";
export { clusterNodes, currentNodes, nodeBaseUrl, type ClusterNode, type NodeSource } from "./nodes.ts";
export {
  loadNodeIdentity,
  loadEnrollmentToken,
  bearerMatches,
  isLoopbackListen,
  type NodeIdentity,
} from "./node-identity.ts";
export { NodeFanOut, NodeError, type NodeFanOutOptions } from "./node-fan-out.ts";
export { nodeFetchOptions, nodePortTls } from "./node-tls.ts";

export { ForwardReceiver, type ForwardAnswer } from "./forward-receiver.ts";
export { EnrollAnnouncer, type EnrollState } from "./enroll-announcer.ts";
