export { createCoordinatorApp, type CoordinatorDeps } from "./app.ts";
export { createHttpModule, type HttpModule, type HttpModuleOptions } from "./http-module.ts";
export { errorHandler, errorBody, statusFor } from "./errors.ts";
export { needsLake } from "./startup-gate.ts";
export { coordinatorCorePlugins, legacyV3AuthRoutes, type CorePluginDeps } from "./auth/index.ts";
export {
  searchRoutes,
  searchServices,
  SearchService,
  TransactionService,
  transactionSearchRoute,
  nodeSearchAnswer,
  nodeReads,
  NodeCallReportsBody,
  NodeCallRowsBody,
  NodeHistogramBody,
  lakeMessage,
  NodeMessageBody,
  NodeOtlpBody,
  otlpRelated,
  type NodeReadDeps,
  NodeSearchBody,
  NO_SEARCH_SETTINGS,
  virtualFieldsOf,
  mergeNodePages,
  compareKeys,
  virtualFieldsJson,
  nodesMeta,
  type Gathered,
  type NodeAnswer,
  type OverNodes,
  type OverNodesRead,
  type ListSearch,
  type ListSearchResult,
  type NodePage,
  type NodeReport,
  type SearchRequest,
  type SearchSettings,
  buildWhere,
} from "./search/index.ts";
export { exportRoutes, exportsDir, ExportJobRunner, ExportService, type ExportDeps } from "./exports/index.ts";
export { importRoutes, importCapture, type ImportReport, type ImportRouteDeps } from "./imports/index.ts";
export {
  queryRoutes,
  sqlOverNodes,
  SqlQueryService,
  NodeSqlBody,
  nodeSqlAnswer,
  SQL_NODE_COLUMN,
} from "./query/index.ts";
export { statisticsRoutes, lakeTableStats, NodeStatisticsBody } from "./statistics/index.ts";
export {
  everyDestination,
  kpiMetrics,
  kpiRoutes,
  KpiService,
  NodeDestinationsBody,
  NodeKpiBody,
  nodeKpiPartial,
} from "./kpi/index.ts";
export {
  lineProtocolDefs,
  lineProtocolMappingSync,
  lineProtocolRoutes,
  type LineProtocolSync,
} from "./lineproto/index.ts";
export { uiRoutes, type UiOptions } from "./ui/index.ts";
export {
  HealthMonitor,
  healthRoute,
  type HealthCheck,
  type HealthReport,
  type HealthSources,
  type HealthStatus,
} from "./health.ts";
export { streamRoutes } from "./stream/index.ts";
export { ErrorResponse, errors } from "./openapi/schemas.ts";
export { netrisRoutes, gamedataRoutes } from "./games/netris-mount.ts";
export { chessRoutes, type ChessRouteDeps } from "./games/chess.ts";
export { systemRoutes, integrationsOf, type SystemDeps } from "./system/index.ts";
export { enrollmentRoutes, type EnrollmentDeps } from "./enrollment/index.ts";
