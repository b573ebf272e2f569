/**
 * Wiring of the node port (node.http_server): its app (src/cluster/node-app.ts) with the lake's
 * search and reads, HEP over HTTP, the live stream and the central's forward receiver, served over
 * HTTPS when node.http_server.cert and key are set (docs/ARCHITECTURE.md "Node authentication").
 */
import {
  createHttpModule,
  type HealthReport,
  type HttpModule,
  NO_SEARCH_SETTINGS,
  SearchService,
  SqlQueryService,
} from "./api/index.ts";
import { createNodeApp, type NodeIdentity, nodePortTls } from "./cluster/index.ts";
import type { Config } from "./config/index.ts";
import type { Logger, MetricsRegistry, StartupState } from "./core/index.ts";
import type { HepIngest } from "./ingest/index.ts";
import type { Lake } from "./lake/index.ts";
import { createForwardReceiver } from "./relay.ts";
import type { LiveStream } from "./stream/index.ts";

export interface NodePortParts {
  lake: Lake | undefined;
  ingest: HepIngest | undefined;
  identity: NodeIdentity | undefined;
  live: LiveStream | undefined;
  health: () => HealthReport;
  startup: StartupState;
}

export function createNodePort(config: Config, p: NodePortParts, logger: Logger, metrics: MetricsRegistry): HttpModule {
  const { lake, ingest, identity, live } = p;
  const timeoutMs = config.coordinator.query_timeout_sec * 1000;
  const maxResultBytes = config.coordinator.query.max_result_bytes;
  const nodeApp = createNodeApp({
    logger,
    ...(lake
      ? {
          lake,
          search: new SearchService(
            lake,
            NO_SEARCH_SETTINGS,
            config.storage.lakehouse.search,
            timeoutMs,
            maxResultBytes,
          ),
          reads: { timeoutMs, maxResultBytes, sql: SqlQueryService.fromConfig(lake, config, metrics) },
        }
      : {}),
    ...(identity ? { identity, ...(identity.token ? { token: identity.token } : {}) } : {}),
    openMetadata: config.node.http_server.open_metadata,
    ...(ingest ? { pipeline: ingest.pipeline, ...(ingest.http ? { hepBody: ingest.http } : {}) } : {}),
    catalogType: config.storage.lakehouse.catalog_type,
    hepOverHttp: config.ingest.hep.enable && config.ingest.hep.http.enable,
    health: p.health,
    startup: p.startup,
    ...(live && config.ingest.hep_stream.enable ? { stream: live.broker } : {}),
    ...createForwardReceiver(config, lake, logger, metrics, ingest),
  });
  const hs = config.node.http_server;
  return createHttpModule(
    nodeApp,
    {
      name: "node-http",
      listen: hs.listen,
      listenKey: "node.http_server.listen",
      tls: nodePortTls(hs),
      reusePort: hs.reuse_port,
      reusePortKey: "node.http_server.reuse_port",
    },
    logger,
  );
}
