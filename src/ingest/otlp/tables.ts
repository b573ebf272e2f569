import type { ColumnDef, TableDef } from "../../core/index.ts";

/**
 * The OTLP tables (docs/API.md "Protocol types": traces 200, metrics 201, logs 202), with exactly
 * the columns of the spec plus the `date` partition (the UTC day of `timestamp`). JSON columns are
 * VARCHAR holding JSON text (docs/OTLP.md "Columns"). Files are sorted so that the rows a search
 * asks for together sit together: a trace's spans, a metric's points, a service's log records.
 */
export type OtlpSignal = "traces" | "metrics" | "logs";

const col = (name: string, type: ColumnDef["type"]): ColumnDef => ({ name, type });
const DATE: ColumnDef = { name: "date", type: "date", derived: "date_of:timestamp" };

const COLUMNS: Record<OtlpSignal, ColumnDef[]> = {
  traces: [
    col("timestamp", "timestamp"),
    col("end_timestamp", "timestamp"),
    col("duration_ns", "int64"),
    col("trace_id", "varchar"),
    col("span_id", "varchar"),
    col("parent_span_id", "varchar"),
    col("name", "varchar"),
    col("kind", "int32"),
    col("status_code", "int32"),
    col("status_message", "varchar"),
    col("service_name", "varchar"),
    col("scope_name", "varchar"),
    col("resource_attrs", "varchar"),
    col("span_attrs", "varchar"),
    col("raw", "varchar"),
    DATE,
  ],
  metrics: [
    col("timestamp", "timestamp"),
    col("name", "varchar"),
    col("description", "varchar"),
    col("unit", "varchar"),
    col("type", "varchar"),
    col("value_double", "float64"),
    col("value_int", "int64"),
    col("service_name", "varchar"),
    col("scope_name", "varchar"),
    col("attributes", "varchar"),
    col("raw", "varchar"),
    DATE,
  ],
  logs: [
    col("timestamp", "timestamp"),
    col("observed_timestamp", "timestamp"),
    col("severity_number", "int32"),
    col("severity_text", "varchar"),
    col("body", "varchar"),
    col("body_json", "varchar"),
    col("trace_id", "varchar"),
    col("span_id", "varchar"),
    col("service_name", "varchar"),
    col("attributes", "varchar"),
    col("raw", "varchar"),
    DATE,
  ],
};

const SORT: Record<OtlpSignal, string[]> = {
  traces: ["trace_id", "timestamp"],
  metrics: ["name", "timestamp"],
  logs: ["service_name", "timestamp"],
};

export const OTLP_TABLES: Record<OtlpSignal, string> = {
  traces: "otlp_traces",
  metrics: "otlp_metrics",
  logs: "otlp_logs",
};

/** HEP-style protocol types of the OTLP tables (docs/API.md "Protocol types"). */
export const OTLP_PROTO_TYPES: Record<OtlpSignal, number> = { traces: 200, metrics: 201, logs: 202 };

export function otlpTableDef(signal: OtlpSignal): TableDef {
  return {
    schema: "main",
    name: OTLP_TABLES[signal],
    columns: [...COLUMNS[signal]],
    timeColumn: "timestamp",
    partitionBy: "date",
    sortBy: SORT[signal],
  };
}

export const otlpTableKey = (signal: OtlpSignal) => `main.${OTLP_TABLES[signal]}`;

export const otlpTableDefs = (): TableDef[] => (["traces", "metrics", "logs"] as const).map(otlpTableDef);
