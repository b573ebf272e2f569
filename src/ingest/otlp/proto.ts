/**
 * The OTLP messages this receiver decodes and answers with (docs/OTLP.md "What is kept, and when it
 * is answered"), written for this project from the OTLP specification (opentelemetry-proto v1:
 * common, resource, trace, metrics, logs and the three collector services) as one protobufjs
 * schema. Only what the receiver stores or answers is declared; protobuf skips every other field,
 * so newer senders still decode. Field numbers are the specification's; names follow it (protobufjs
 * exposes them in lowerCamelCase).
 */
import protobuf from "protobufjs";

const SCHEMA = `
syntax = "proto3";
package svc.otlp;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Scope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }

message SpanEvent { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message SpanLink { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message SpanStatus { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated SpanEvent events = 11;
  uint32 dropped_events_count = 12;
  repeated SpanLink links = 13;
  uint32 dropped_links_count = 14;
  SpanStatus status = 15;
  fixed32 flags = 16;
}
message ScopeSpans { Scope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }

message Exemplar {
  repeated KeyValue filtered_attributes = 7;
  fixed64 time_unix_nano = 2;
  oneof value { double as_double = 3; sfixed64 as_int = 6; }
  bytes span_id = 4;
  bytes trace_id = 5;
}
message NumberDataPoint {
  repeated KeyValue attributes = 7;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  oneof value { double as_double = 4; sfixed64 as_int = 6; }
  repeated Exemplar exemplars = 5;
  uint32 flags = 8;
}
message HistogramDataPoint {
  repeated KeyValue attributes = 9;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  optional double sum = 5;
  repeated fixed64 bucket_counts = 6;
  repeated double explicit_bounds = 7;
  repeated Exemplar exemplars = 8;
  uint32 flags = 10;
  optional double min = 11;
  optional double max = 12;
}
message ExpBuckets { sint32 offset = 1; repeated uint64 bucket_counts = 2; }
message ExponentialHistogramDataPoint {
  repeated KeyValue attributes = 1;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  optional double sum = 5;
  sint32 scale = 6;
  fixed64 zero_count = 7;
  ExpBuckets positive = 8;
  ExpBuckets negative = 9;
  uint32 flags = 10;
  repeated Exemplar exemplars = 11;
  optional double min = 12;
  optional double max = 13;
  double zero_threshold = 14;
}
message ValueAtQuantile { double quantile = 1; double value = 2; }
message SummaryDataPoint {
  repeated KeyValue attributes = 7;
  fixed64 start_time_unix_nano = 2;
  fixed64 time_unix_nano = 3;
  fixed64 count = 4;
  double sum = 5;
  repeated ValueAtQuantile quantile_values = 6;
  uint32 flags = 8;
}
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message Summary { repeated SummaryDataPoint data_points = 1; }
message Metric {
  string name = 1;
  string description = 2;
  string unit = 3;
  oneof data {
    Gauge gauge = 5;
    Sum sum = 7;
    Histogram histogram = 9;
    ExponentialHistogram exponential_histogram = 10;
    Summary summary = 11;
  }
  repeated KeyValue metadata = 12;
}
message ScopeMetrics { Scope scope = 1; repeated Metric metrics = 2; string schema_url = 3; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; string schema_url = 3; }

message LogRecord {
  fixed64 time_unix_nano = 1;
  fixed64 observed_time_unix_nano = 11;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  string event_name = 12;
}
message ScopeLogs { Scope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }

message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }

message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
message ExportMetricsPartialSuccess { int64 rejected_data_points = 1; string error_message = 2; }
message ExportLogsPartialSuccess { int64 rejected_log_records = 1; string error_message = 2; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportMetricsServiceResponse { ExportMetricsPartialSuccess partial_success = 1; }
message ExportLogsServiceResponse { ExportLogsPartialSuccess partial_success = 1; }

// google.rpc.Status: the body of an OTLP/HTTP error and of a gRPC error's details.
message ProtoAny { string type_url = 1; bytes value = 2; }
message RpcStatus { int32 code = 1; string message = 2; repeated ProtoAny details = 3; }
// google.rpc.RetryInfo: with RESOURCE_EXHAUSTED it tells an OTLP/gRPC exporter the refusal is retryable, and when.
message Duration { int64 seconds = 1; int32 nanos = 2; }
message RetryInfo { Duration retry_delay = 1; }
`;

/** The parsed schema (attribute-limit.ts wraps decoders of its types). */
export const OTLP_ROOT = protobuf.parse(SCHEMA, { keepCase: false }).root;
const t = (name: string) => OTLP_ROOT.lookupType(`svc.otlp.${name}`);

export type OtlpSignalName = "traces" | "metrics" | "logs";

/** Request and response message per signal, and what the partial success counts. */
export const MESSAGES = {
  traces: {
    request: t("ExportTraceServiceRequest"),
    response: t("ExportTraceServiceResponse"),
    rejectedField: "rejectedSpans",
    resourceField: "resourceSpans",
  },
  metrics: {
    request: t("ExportMetricsServiceRequest"),
    response: t("ExportMetricsServiceResponse"),
    rejectedField: "rejectedDataPoints",
    resourceField: "resourceMetrics",
  },
  logs: {
    request: t("ExportLogsServiceRequest"),
    response: t("ExportLogsServiceResponse"),
    rejectedField: "rejectedLogRecords",
    resourceField: "resourceLogs",
  },
} as const;

export const RPC_STATUS = t("RpcStatus");
export const RETRY_INFO = t("RetryInfo");

/** gRPC method paths of the OTLP collector services (docs/OTLP.md "gRPC"). */
export const GRPC_PATHS: Record<OtlpSignalName, string> = {
  traces: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
  metrics: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
  logs: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
};

/** Types used to turn one decoded item back into OTLP/JSON for the `raw` column. */
export const ITEM_TYPES = {
  span: t("Span"),
  logRecord: t("LogRecord"),
  NumberDataPoint: t("NumberDataPoint"),
  HistogramDataPoint: t("HistogramDataPoint"),
  ExponentialHistogramDataPoint: t("ExponentialHistogramDataPoint"),
  SummaryDataPoint: t("SummaryDataPoint"),
};
