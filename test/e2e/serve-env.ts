import { join } from "node:path";

/**
 * SVC_* settings that keep a `serve` off every well-known port and out of the tree: each listener
 * on 127.0.0.1:0 (the bound address is logged as `listening`), each data file under `dir`. Keys
 * the current serve does not use yet are set too, so a new module never grabs a real port in a test.
 */
export function isolatedServeEnv(dir: string): Record<string, string> {
  return {
    SVC_COORDINATOR_HTTP_SERVER_LISTEN: "127.0.0.1:0",
    SVC_NODE_HTTP_SERVER_LISTEN: "127.0.0.1:0",
    SVC_INGEST_HEP_UDP_LISTEN: "127.0.0.1:0",
    SVC_INGEST_HEP_TCP_LISTEN: "127.0.0.1:0",
    SVC_INGEST_HEP_TLS_LISTEN: "127.0.0.1:0",
    SVC_INGEST_LINE_PROTOCOL_LISTEN: "127.0.0.1:0",
    SVC_COORDINATOR_SETTINGS_DB_PATH: join(dir, "settings.db"),
    SVC_STORAGE_LAKEHOUSE_CATALOG_PATH: join(dir, "catalog.sqlite"),
    SVC_STORAGE_LAKEHOUSE_DATA_PATH: join(dir, "lake") + "/",
  };
}
