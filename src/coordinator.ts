/**
 * The coordinator part of the composition root (main.ts): settings database, auth, and the HTTP
 * app with its v4 plugins, wired from the config.
 */
import type { AnyElysia } from "elysia";
import type { Config } from "./config/index.ts";
import {
  errorMessage,
  readyStartup,
  type Logger,
  type MetricsRegistry,
  type Module,
  type StartupState,
} from "./core/index.ts";
import {
  chessRoutes,
  coordinatorCorePlugins,
  legacyV3AuthRoutes,
  systemRoutes,
  createCoordinatorApp,
  enrollmentRoutes,
  exportRoutes,
  gamedataRoutes,
  importRoutes,
  kpiMetrics,
  kpiRoutes,
  lineProtocolMappingSync,
  lineProtocolRoutes,
  needsLake,
  netrisRoutes,
  queryRoutes,
  searchRoutes,
  searchServices,
  SqlQueryService,
  statisticsRoutes,
  streamRoutes,
  uiRoutes,
  type HealthReport,
  type LineProtocolSync,
} from "./api/index.ts";
import { createAuthModule } from "./auth/index.ts";
import { bearerMatches, FanOutSearch, NodeFactsCache, NodeFanOut, type ClusterNode } from "./cluster/index.ts";
import { createSettingsModule } from "./settings/index.ts";
import type { StreamSource } from "./stream/index.ts";
import type { HepIngest, HepPipeline } from "./ingest/index.ts";
import type { Lake } from "./lake/index.ts";
import { localBackend, McpEngine, mcpRoutes, nodesBackend } from "./mcp/index.ts";

/** When this process started: the System API's uptime. */
const STARTED_AT_MS = Date.now() - Math.round(process.uptime() * 1000);

/**
 * The coordinator: settings database, auth, and the HTTP app with the v4 plugins (guard first).
 * Modules start in that order and stop in reverse. Exported so route tests build it the same way.
 */
export interface CoordinatorCluster {
  /** coordinator.nodes resolved (src/cluster/nodes.ts); empty: this process's lake only. */
  nodes: readonly ClusterNode[];
  /** This process's node and lake id, when it has a lake. */
  self?: { nodeId: string; lakeId: string };
  /** The two-phase start (docs/ARCHITECTURE.md "Start-up"): lake routes answer 503 until it is ready. Default: ready. */
  startup?: StartupState;
  /** The enrolment token (src/cluster/node-identity.ts loadEnrollmentToken), with coordinator.enrollment.enable. */
  enrollmentToken?: string;
}

/**
 * coordinator.nodes and the approved enrolled edges: an edge whose name or URL is a configured
 * node's is left out (the configured entry wins; enrolment refuses such names anyway).
 */
function withEnrolled(
  configured: readonly ClusterNode[],
  enrolled: ReadonlyArray<{ name: string; url: string; token: string }>,
  timeoutMs: number,
): ClusterNode[] {
  const extra = enrolled.filter((e) => !configured.some((n) => n.name === e.name || n.url === e.url));
  return [
    ...configured,
    ...extra.map((e) => ({ name: e.name, url: e.url, timeoutMs, ...(e.token ? { token: e.token } : {}) })),
  ];
}

export function createCoordinator(
  config: Config,
  logger: Logger,
  metrics: MetricsRegistry,
  lake?: Lake,
  pipeline?: HepPipeline,
  health?: () => HealthReport,
  stream?: StreamSource,
  cluster: CoordinatorCluster = { nodes: [] },
) {
  const c = config.coordinator;
  const startup = cluster.startup ?? readyStartup();
  // Routes over the lake answer 503 STARTING with Retry-After until the lake has started.
  const gated = (what: string, p: AnyElysia) => (lake ? needsLake(startup, what, p) : p);
  const settings = createSettingsModule({ path: c.settings_db_path, games: c.widgets.control.games }, logger);
  const auth = createAuthModule(c, settings.store, logger, metrics);
  // Edges that enrolled themselves are searched beside coordinator.nodes (docs/DEPLOY.md "Finding the edges").
  const enrollment = c.enrollment.enable ? cluster.enrollmentToken : undefined;
  const fanOut = cluster.nodes.length > 0 || enrollment !== undefined;
  const nodes = enrollment
    ? () => withEnrolled(cluster.nodes, settings.store.enrolledNodes.approved(), c.node_timeout_ms)
    : cluster.nodes;
  // One metadata check per node for the list search and every other read (src/cluster/node-facts.ts).
  const facts = new NodeFactsCache();
  const offered = {
    live_stream: c.hep_stream.enable && stream !== undefined,
    search: lake !== undefined || fanOut,
    games: c.widgets.control.games,
  };
  const v4 = coordinatorCorePlugins({ config: c, settings: settings.store, auth: auth.service, features: offered });
  // Live stream (docs/STREAM.md "Turning it on"): only when coordinator.hep_stream.enable, else the path is a 404.
  if (c.hep_stream.enable && stream) v4.push(streamRoutes({ source: stream, config: c.hep_stream }));
  // Game relays (docs/GAMES.md): 503 when coordinator.widgets.control.games is false.
  v4.push(netrisRoutes({ enabled: c.widgets.control.games }));
  if (enrollment !== undefined) {
    v4.push(
      enrollmentRoutes({
        repo: settings.store.enrolledNodes,
        admits: (authorization) => bearerMatches(authorization, enrollment),
        approval: c.enrollment.approval,
        maxNodes: c.enrollment.max_nodes,
        configured: cluster.nodes,
      }),
    );
  }
  // System, Logs and Integrations (docs/OPERATIONS.md "System, logs and integrations"): administrators only.
  v4.push(systemRoutes({ config, startedAtMs: STARTED_AT_MS, ...(health ? { health } : {}) }));
  // The reads besides the list search over every node (docs/ARCHITECTURE.md "Reads over several nodes").
  const overNodes = fanOut
    ? new NodeFanOut({
        nodes,
        ...(cluster.self ? { self: cluster.self } : {}),
        deadlineMs: c.query_timeout_sec * 1000,
        logger: logger.child({ component: "fan-out" }),
        metrics,
        facts,
      })
    : undefined;
  // Over coordinator.nodes POST /transactions/search fans out (docs/ARCHITECTURE.md "Coordinator over several nodes").
  const listSearch = fanOut
    ? new FanOutSearch({
        nodes,
        ...(lake ? { local: searchServices({ lake, settings: settings.store, config }).search } : {}),
        ...(cluster.self ? { self: cluster.self } : {}),
        settings: settings.store,
        deadlineMs: c.query_timeout_sec * 1000,
        logger: logger.child({ component: "fan-out" }),
        metrics,
        facts,
      })
    : undefined;
  // Features over the lake: search, transactions, messages, QoS (absent on a coordinator without storage).
  const features: Module[] = [];
  /** Modules that read or write the lake: they start after it (main.ts, docs/ARCHITECTURE.md "Start-up"). */
  const lakeFeatures: Module[] = [];
  let lineProtocolSync: LineProtocolSync | undefined;
  // Every read over this process's lake, over coordinator.nodes, or both. A coordinator without a
  // lake of its own reads the nodes only (docs/ARCHITECTURE.md "A coordinator without a lake").
  if (lake || (listSearch && overNodes)) {
    // Read-only SQL and statistics (docs/API.md "User SQL (`POST /query`, `POST /statistics/query`)"); with nodes, /query per node (docs/ARCHITECTURE.md "Reads over several nodes").
    const sql = lake ? SqlQueryService.fromConfig(lake, config, metrics) : undefined;
    v4.push(gated("SQL", queryRoutes(sql, overNodes)), gated("statistics", statisticsRoutes(sql, overNodes)));
    // Natural-language queries over the same search and SQL services (docs/MCP.md); tools at /mcp with mcp.enable.
    const backend = sql
      ? localBackend(searchServices({ lake, settings: settings.store, config }).search, sql)
      : listSearch && overNodes
        ? nodesBackend(listSearch, overNodes)
        : undefined;
    if (backend)
      v4.push(
        gated(
          "the query tools",
          mcpRoutes(new McpEngine(config.mcp, backend, logger.child({ component: "mcp" }), metrics), {
            streamable: config.mcp.enable,
          }),
        ),
      );
    v4.push(
      gated(
        "search",
        searchRoutes({
          lake,
          settings: settings.store,
          config,
          ...(listSearch ? { listSearch } : {}),
          ...(overNodes ? { overNodes } : {}),
        }),
      ),
    );
    // Call-quality KPIs (docs/KPIS.md): API routes, and svc_kpi_* series computed on scrape (of this process's lake).
    v4.push(gated("the call KPIs", kpiRoutes(lake, c.query_timeout_sec * 1000, overNodes)));
    if (lake) kpiMetrics(metrics, lake, logger, { timeoutMs: c.query_timeout_sec * 1000, ready: () => startup.ready });
    // Line-protocol discovery and its mapping rows (docs/LINE-PROTOCOL.md "Automatic mapping rows"), with the receiver's table_prefix.
    const tablePrefix = config.ingest.line_protocol.table_prefix;
    v4.push(
      gated(
        "line-protocol discovery",
        lineProtocolRoutes({ lake, tablePrefix, ...(overNodes ? { over: overNodes } : {}) }),
      ),
    );
    if (lake) {
      lineProtocolSync = lineProtocolMappingSync({ lake, settings: settings.store, tablePrefix, logger });
      lakeFeatures.push(lineProtocolSync);
    }
    // Exports (direct, share links, job queue) and PCAP import through the HEP pipeline (503 without a lake of this process's own).
    const exports = exportRoutes({
      lake,
      settings: settings.store,
      config,
      logger,
      ...(overNodes ? { overNodes } : {}),
    });
    v4.push(
      ...exports.plugins.map((p) => gated("exports", p)),
      gated("imports", importRoutes({ lake, config, metrics, ...(pipeline ? { pipeline } : {}) })),
    );
    lakeFeatures.push(exports.module);
  }
  // Chess: the NetChess relay and the model's move (docs/GAMES.md); 503 when games are switched off.
  const chess = chessRoutes({ games: c.widgets.control.games, llm: config.mcp.llm });
  v4.push(chess.plugin);
  features.push(chess.module);
  // The browser dashboard at / (ui-dist/, embedded in the executable by scripts/build.ts).
  const app = createCoordinatorApp({
    config,
    logger,
    metrics,
    v4,
    v3: [legacyV3AuthRoutes(auth.service)],
    root: [
      uiRoutes({
        apiPrefix: c.http_server.api_prefix,
        imageOrigins: c.oauth2_provider.enable ? [c.oauth2_provider.provider_image] : [],
      }),
      ...(c.widgets.control.games && c.http_server.gamedata_dir
        ? [gamedataRoutes(c.http_server.gamedata_dir, logger, auth.service)]
        : []),
    ],
    ...(health ? { health } : {}),
  });
  return {
    app,
    settings: settings.store,
    auth: auth.service,
    modules: [settings.module, auth.module, ...lakeFeatures, ...features],
    lakeModules: lakeFeatures,
    lineProtocolSync,
  };
}

/** Capture agents seen by ingest go into the settings database every 10 s (and once at stop). */
export function agentsFeed(
  ingest: HepIngest,
  settings: ReturnType<typeof createCoordinator>["settings"],
  logger: Logger,
): Module {
  let timer: ReturnType<typeof setInterval> | undefined;
  const drain = () => {
    try {
      settings.agents.recordSeen(ingest.pipeline.agents.drain());
    } catch (e) {
      logger.warn("could not record capture agents", { error: errorMessage(e) });
    }
  };
  return {
    name: "agents-feed",
    start: async () => {
      timer = setInterval(drain, 10_000);
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      drain();
    },
  };
}
