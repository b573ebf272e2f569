/**
 * Columns of the results grid (docs/DASHBOARD.md "Columns"): what a HOMER user reads by default
 * (date, method or status, from/to user, R-URI, source and destination ip:port, Call-ID, capture
 * id, node, transport), what else a row offers, and which keys are internal (row ids, the raw
 * payload and data_extra, storage names) and so only listed under "Internal". Pure; see
 * columns.test.ts.
 */
import { cellText, hostLabel } from "./format.ts";

type Row = Record<string, unknown>;

/** The default, in this order, for every table that has them (SIP first, then logs and traces). */
export const DEFAULT_COLUMNS = [
  "timestamp",
  "event",
  "caller",
  "callee",
  "ruri",
  "src",
  "dst",
  "session_id",
  "node_id",
  "node",
  "protocol",
  "name",
  "service_name",
  "trace_id",
  "body",
];

/** Keys an operator does not read in a grid: ids, raw data, storage, parts shown in another column. */
export const INTERNAL_COLUMNS = new Set([
  "id",
  "sid",
  "uuid",
  "timestamp_us",
  "date",
  "proto_type",
  "payload",
  "data_extra",
  "src_alias",
  "dst_alias",
  "storage_lake",
  "storage_volume",
]);

/** Columns read from data_extra (src/ingest/hep/rows.ts writes these members) when the row has no column of that name. */
const FROM_EXTRA: Record<string, string> = {
  ruri: "request_uri",
  user_agent: "user_agent",
  node: "node_name",
  reason: "reason",
  cseq: "cseq",
};

const TITLES: Record<string, string> = {
  timestamp: "Date",
  event: "Method",
  caller: "From user",
  callee: "To user",
  ruri: "R-URI",
  src: "Source",
  dst: "Destination",
  session_id: "Call-ID",
  node_id: "Capture ID",
  node: "Node",
  protocol: "Proto",
  user_agent: "User-Agent",
  reason: "Reason",
  cseq: "CSeq",
  cseq_method: "CSeq method",
  method: "Request method",
  response_code: "Status",
  cid: "Correlation ID",
  src_ip: "Source IP",
  dst_ip: "Destination IP",
  src_port: "Source port",
  dst_port: "Destination port",
  id: "Row number",
  sid: "Session id",
  uuid: "UUID",
  timestamp_us: "Time (µs)",
  date: "Partition date",
  proto_type: "HEP protocol type",
  src_alias: "Source alias",
  dst_alias: "Destination alias",
  storage_lake: "Storage lake",
  storage_volume: "Storage table",
  data_extra: "Extra (raw JSON)",
  payload: "Payload (raw)",
};
export const columnTitle = (k: string): string => TITLES[k] ?? k.replace(/_/g, " ");

/** Every key the grid can show for rows with `keys`: the row's keys plus source/destination and data_extra members. */
export function availableColumns(keys: readonly string[]): string[] {
  const out = [...keys];
  if (keys.includes("src_ip")) out.push("src");
  if (keys.includes("dst_ip")) out.push("dst");
  if (keys.includes("data_extra")) for (const k of Object.keys(FROM_EXTRA)) if (!keys.includes(k)) out.push(k);
  return out;
}

/** The columns shown: the user's choice (those still present), else the default, else the first eight non-internal keys. */
export function visibleColumns(available: readonly string[], chosen: readonly string[] | undefined): string[] {
  const picked = (chosen ?? []).filter((k) => available.includes(k));
  if (picked.length > 0) return picked;
  const preferred = DEFAULT_COLUMNS.filter((k) => available.includes(k));
  return preferred.length > 0 ? preferred : available.filter((k) => !INTERNAL_COLUMNS.has(k)).slice(0, 8);
}

/** The chooser's two lists: columns to read, and internal ones (listed apart, off by default). */
export function chooserGroups(available: readonly string[]): { regular: string[]; internal: string[] } {
  const order = (k: string) => {
    const i = DEFAULT_COLUMNS.indexOf(k);
    return i < 0 ? DEFAULT_COLUMNS.length : i;
  };
  const regular = available
    .filter((k) => !INTERNAL_COLUMNS.has(k))
    .sort((a, b) => order(a) - order(b) || columnTitle(a).localeCompare(columnTitle(b)));
  return { regular, internal: available.filter((k) => INTERNAL_COLUMNS.has(k)) };
}

/** The value of a column: source/destination as alias (ip:port), data_extra members, or the row's own key. */
export function columnValue(row: Row, key: string): unknown {
  if (key === "src") return hostLabel(row.src_ip, row.src_port, row.src_alias);
  if (key === "dst") return hostLabel(row.dst_ip, row.dst_port, row.dst_alias);
  const extra = FROM_EXTRA[key];
  if (extra !== undefined && !(key in row)) {
    const d = row.data_extra;
    return typeof d === "object" && d !== null ? (d as Row)[extra] : undefined;
  }
  return row[key];
}

/** What a column sorts by: capture time in µs for the date, numbers as numbers, text case-insensitively. */
export function columnSortValue(row: Row, key: string): string | number {
  if (key === "timestamp" && typeof row.timestamp_us === "number") return row.timestamp_us;
  const v = columnValue(row, key);
  return typeof v === "number" ? v : cellText(v).toLowerCase();
}
