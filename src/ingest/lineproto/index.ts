/** Line-protocol ingest (docs/LINE-PROTOCOL.md): parser, receiver, table rules and structured HEP table mode. */
export { parseLineProtocol } from "./parse.ts";
export type {
  LpError,
  LpErrorReason,
  LpField,
  LpFieldType,
  LpFieldValue,
  LpParseOptions,
  LpParseResult,
  LpPoint,
  LpPrecision,
} from "./parse.ts";
export {
  createLineProtocolReceiver,
  lpReceiverMetrics,
  type LineProtocolConfig,
  type LineProtocolReceiver,
  type LpEndpoint,
  type LpReceiverMetrics,
  type LpRequestOutcome,
} from "./receiver.ts";
export { LpIngest, type LpIngestOptions, type LpOutcome, type LpWriteRequest, type LpWriteResult } from "./ingest.ts";
export { adoptStoredTables, LpTables, type LpSink, type LpTableSink } from "./tables.ts";
export type { LineIssue } from "./rows.ts";
export {
  isLineProtocolLayout,
  lineProtocolTableDef,
  LP_TIME_COLUMN,
  matchesTablePrefix,
  sanitizeIdentifier,
  schemaFor,
  tableNameFor,
  VALID_PREFIX,
} from "./names.ts";
