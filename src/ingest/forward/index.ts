/** Store-and-forward relay and live mirror of accepted HEP packets, line-protocol and OTLP requests (docs/DEPLOY.md). */
export {
  HepRelay,
  FORWARD_HEADERS,
  FORWARD_PATH,
  FORWARD_KINDS,
  type ForwardKind,
  type ForwardHealth,
  type ForwardState,
  type RawSink,
} from "./forwarder.ts";
export { RawBatch, eachRecord, type RawChunk } from "./raw-batch.ts";
export { decodeLpRecord, decodeOtlpRecord, type LpRecord, type OtlpRecord } from "./records.ts";
export { createForwardDecoders, type ForwardDecoders, type RecordOutcome } from "./decoders.ts";
export { decodeHepRecords, type HepRecordsResult } from "./hep-records.ts";
