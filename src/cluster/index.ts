export { createNodeApp, type NodeAppDeps } from "./node-app.ts";
export { StreamHub, nodeStreamUrl, type StreamHubOptions } from "./stream-hub.ts";
