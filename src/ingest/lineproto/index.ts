/** Line-protocol ingest (spec doc 2): the parser for now; the receiver routes join later. */
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
