/** Ingest: HEP (listeners, pipeline, the ingest thread), line protocol and OTLP receivers, writing into a Sink. */
export { AUTH_FAILED, HepPipeline, type Sink, type PacketTap, type StreamResult, type Transport } from "./pipeline.ts";
export { BatchSink, type SealedBatch, type BatchSinkOptions } from "./batch-sink.ts";
export { hepTableDef, hepTableName, seededHepTables } from "./hep/tables.ts";
export { adoptHepTables } from "./hep/adopt.ts";
export type { BoundListener } from "./hep/udp.ts";
export {
  createHepIngest,
  createHepListeners,
  createHepPipeline,
  listenerMetrics,
  type HepIngest,
} from "./hep/ingest.ts";
export {
  createThreadedHepIngest,
  HepIngestThreads,
  type IngestThreadOptions,
  type StreamFeed,
  type ThreadState,
} from "./thread/host.ts";
export {
  createLineProtocolReceiver,
  adoptStoredTables,
  isLineProtocolLayout,
  matchesTablePrefix,
  VALID_PREFIX,
  type LineProtocolReceiver,
  type LpSink,
  type LpTableSink,
} from "./lineproto/index.ts";
export { AgentTracker, type AgentActivity } from "./agents.ts";
export { adoptOtlpTables } from "./otlp/adopt.ts";
export type { OtlpReceiver } from "./otlp/index.ts";
/**
 * The OTLP receiver with its protobuf schema and gRPC server, loaded only where used (with
 * ingest.otlp.enable, by the load generator): `svc serve` starts without them (docs/ARCHITECTURE.md "Start-up").
 */
export const loadOtlp = () => import("./otlp/index.ts");
export {
  HepRelay,
  FORWARD_HEADERS,
  FORWARD_KINDS,
  FORWARD_PATH,
  createForwardDecoders,
  decodeHepRecords,
  decodeLpRecord,
  decodeOtlpRecord,
  eachRecord,
  type ForwardDecoders,
  type ForwardHealth,
  type ForwardKind,
  type ForwardState,
  type RawSink,
  type RecordOutcome,
} from "./forward/index.ts";
