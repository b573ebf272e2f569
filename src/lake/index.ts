export { Lake, formatTimestampUs, parseStatTimestamp, type LakeConfig, type LakeDeps, type ScanOptions } from "./lake.ts";
export type { QueryResult, SqlParams } from "./engine.ts";
export type { LakeCatalog } from "./catalog-port.ts";
export { findTimeTravel, rewriteTimeTravel, tokenize } from "./query/time-travel.ts";
export { ident, literal } from "./sql.ts";
