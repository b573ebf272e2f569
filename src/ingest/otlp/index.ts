/** OTLP ingest (docs/OTLP.md): receiver, tables, row building. */
export { createOtlpReceiver, type OtlpConfig, type OtlpReceiver } from "./receiver.ts";
export { OtlpIngest, otlpMetrics, type OtlpSink, type OtlpResult } from "./ingest.ts";
export { OTLP_PROTO_TYPES, OTLP_TABLES, otlpTableDef, otlpTableDefs, otlpTableKey, type OtlpSignal } from "./tables.ts";
export { adoptOtlpTables } from "./adopt.ts";
export { GRPC_PATHS, MESSAGES as OTLP_MESSAGES } from "./proto.ts";
