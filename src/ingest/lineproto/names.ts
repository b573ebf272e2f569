/**
 * Naming rules of line-protocol tables (docs/LINE-PROTOCOL.md "Table and column rules", "Discovery response"),
 * shared by the receiver (where a point goes) and the coordinator (which tables are line-protocol
 * tables). Pure.
 */
import type { ColumnDef, TableDef } from "../../core/index.ts";

/** The time column every line-protocol table starts with (rule 3). */
export const LP_TIME_COLUMN = "time";

/** The catalog's limit on schema, table and column names (src/lake/catalog `validName`). */
export const MAX_NAME_LENGTH = 255;

/**
 * Rule 1 and 2: ASCII letters, digits and `_` stay, every other character (per code point) becomes
 * `_`, a leading digit gets a `_` prefix. Empty input stays empty (the caller picks the default).
 * ASCII only, so the names fit `event_type` = `<schema>__<table>` of the search API (docs/API.md "Protocol types").
 */
export function sanitizeIdentifier(name: string): string {
  let out = "";
  for (const ch of name) out += /^[A-Za-z0-9_]$/.test(ch) ? ch : "_";
  return /^[0-9]/.test(out) ? `_${out}` : out;
}

/** Rule 1: schema of a write from `db` / `bucket`, else `default_db`, else `main`. */
export function schemaFor(requested: string | undefined | null, defaultDb: string): string {
  const fromRequest = requested ? sanitizeIdentifier(requested) : "";
  if (fromRequest) return fromRequest;
  return sanitizeIdentifier(defaultDb) || "main";
}

/** Rule 2: `<table_prefix><sanitised measurement>`. */
export const tableNameFor = (prefix: string, measurement: string): string => prefix + sanitizeIdentifier(measurement);

/** Names that are HEP tables or belong to other producers (discovery with an empty prefix skips them). */
const FOREIGN_PREFIXES = ["hep_proto_", "otlp_", "mem_hep_"];

/**
 * Discovery (docs/LINE-PROTOCOL.md "Discovery response"): a non-empty prefix selects names starting with it; an
 * empty prefix selects every table except HEP, OTLP and buffer names. `prefix` must already be
 * validated (ASCII letters, digits and `_`); it is matched literally and case-sensitively, like a
 * `LIKE 'prefix%'` whose `_` is taken as itself.
 */
export function matchesTablePrefix(name: string, prefix: string): boolean {
  if (prefix) return name.startsWith(prefix);
  const lower = name.toLowerCase();
  return !FOREIGN_PREFIXES.some((p) => lower.startsWith(p));
}

export const VALID_PREFIX = /^[A-Za-z0-9_]*$/;

/** A table written by this receiver: `time` TIMESTAMP first (rule 3), not partitioned. */
export function isLineProtocolLayout(columns: readonly Pick<ColumnDef, "name" | "type">[]): boolean {
  const first = columns[0];
  return first !== undefined && first.name.toLowerCase() === LP_TIME_COLUMN && first.type === "timestamp";
}

/** The lake definition of a line-protocol table: unpartitioned (no date column), sorted by time. */
export function lineProtocolTableDef(schema: string, name: string, columns: ColumnDef[]): TableDef {
  return { schema, name, columns, timeColumn: LP_TIME_COLUMN, sortBy: [LP_TIME_COLUMN] };
}
