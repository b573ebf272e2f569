export { createCoordinatorApp, type CoordinatorDeps } from "./app.ts";
export { createHttpModule, type HttpModule, type HttpModuleOptions } from "./http-module.ts";
export { errorHandler, errorBody, statusFor } from "./errors.ts";
export { coordinatorCorePlugins, type CorePluginDeps } from "./auth/index.ts";
export { searchRoutes, searchServices, SearchService, TransactionService } from "./search/index.ts";
export { exportRoutes, exportsDir, ExportJobRunner, ExportService, type ExportDeps } from "./exports/index.ts";
export { importRoutes, importCapture, type ImportReport, type ImportRouteDeps } from "./imports/index.ts";
export { queryRoutes, SqlQueryService } from "./query/index.ts";
export { statisticsRoutes } from "./statistics/index.ts";
