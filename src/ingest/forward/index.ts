/** Store-and-forward relay and live mirror of accepted HEP packets (docs/DEPLOY.md). */
export { HepRelay, FORWARD_HEADERS, FORWARD_PATH, type ForwardHealth, type ForwardState, type RawSink } from "./forwarder.ts";
export { RawBatch, eachRecord, type RawChunk } from "./raw-batch.ts";
