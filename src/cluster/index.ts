export { createNodeApp, type NodeAppDeps } from "./node-app.ts";
