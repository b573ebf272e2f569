/** Types of the line-protocol parser (parse.ts) and its scanner (scanner.ts), apart so neither imports the other for them. */
export type LpPrecision = "ns" | "us" | "ms" | "s";
export type LpFieldType = "float" | "integer" | "unsigned" | "boolean" | "string";
export type LpFieldValue = number | bigint | boolean | string;
export type LpField = { key: string; type: LpFieldType; value: LpFieldValue };
export type LpPoint = {
  measurement: string;
  /** Tag pairs in input order. */
  tags: Array<[string, string]>;
  fields: LpField[];
  /** Nanoseconds since the epoch; null when the line has no timestamp and no `nowNs` was given. */
  timeNs: bigint | null;
  /** 1-based line where the entry starts. */
  line: number;
};
/** Named failure reasons, one counter each on the receiver side. */
export type LpErrorReason =
  | "bad_measurement"
  | "bad_comment"
  | "bad_tag"
  | "duplicate_tag"
  | "missing_fields"
  | "bad_field_key"
  | "bad_field_value"
  | "value_out_of_range"
  | "unterminated_string"
  | "bad_timestamp"
  | "timestamp_out_of_range"
  | "unexpected_text"
  | "invalid_utf8";
/** line and column are 1-based; column counts UTF-16 code units of the decoded line. */
export type LpError = { line: number; column: number; reason: LpErrorReason; message: string };
export type LpParseOptions = {
  precision: LpPrecision;
  /** When set, points without a timestamp get this time truncated to the precision (as the reference does). */
  nowNs?: bigint;
};
export type LpParseResult = { points: LpPoint[]; errors: LpError[] };
