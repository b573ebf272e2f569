import type { FieldObject, FieldOption } from "./mapping-fields.ts";
import { stableGuid, type GeneratedMapping, type MappingsRepo, type SyncOutcome } from "./mappings-repo.ts";
import { protoLabel } from "../core/protocols.ts";

/**
 * Built-in protocol mappings (docs/API.md "Protocol types", "Search form request", "Mapping rows"), written
 * at every start by `seedMappings`:
 * - guid = `stableGuid("seed:<hepid>:<profile>")`, so every installation has the same ids;
 * - a missing row is inserted (also one an administrator deleted: deleting a built-in row and
 *   restarting is how it is reset to the shipped version);
 * - a row still owned by the seed (`source` = seed) gets this build's field list when it differs;
 * - a row an administrator created or whose fields, alias or settings they changed (`source` = user)
 *   is never touched; `retention`, `partition_step` and `mapping_settings` are never rewritten.
 */

const opt = (v: string | number, name = String(v)): FieldOption => ({ name, value: v });

/** RFC 3261 §27.4 methods plus the common extensions (RFC 3262, 3311, 3515, 6086, 6665, 3428, 3903). */
export const SIP_METHODS = [
  "INVITE",
  "ACK",
  "BYE",
  "CANCEL",
  "REGISTER",
  "OPTIONS",
  "PRACK",
  "UPDATE",
  "INFO",
  "REFER",
  "NOTIFY",
  "SUBSCRIBE",
  "MESSAGE",
  "PUBLISH",
];

/** Response codes an operator filters for most (RFC 3261 §21). */
export const SIP_RESPONSES: ReadonlyArray<[number, string]> = [
  [100, "Trying"],
  [180, "Ringing"],
  [183, "Session Progress"],
  [200, "OK"],
  [401, "Unauthorized"],
  [403, "Forbidden"],
  [404, "Not Found"],
  [407, "Proxy Authentication Required"],
  [408, "Request Timeout"],
  [480, "Temporarily Unavailable"],
  [486, "Busy Here"],
  [487, "Request Terminated"],
  [500, "Server Internal Error"],
  [503, "Service Unavailable"],
  [603, "Decline"],
];

type Draft = Omit<FieldObject, "position">;

/** Positions follow the array order (10, 20, ...), leaving room for an operator's insertions. */
const positioned = (drafts: Draft[]): FieldObject[] => drafts.map((d, i) => ({ ...d, position: (i + 1) * 10 }));

const text = (id: string, name: string, extra: Partial<Draft> = {}): Draft => ({
  id,
  name,
  type: "string",
  form_type: "input",
  ...extra,
});
const num = (id: string, name: string, extra: Partial<Draft> = {}): Draft => ({
  id,
  name,
  type: "integer",
  form_type: "input",
  ...extra,
});

const callId = (name = "Call-ID"): Draft => text("call_id", name, { index: "primary", sid_type: true, selected: true });
const methodField = (): Draft =>
  text("method", "Method", {
    form_type: "input_multi_select",
    selected: true,
    form_default: SIP_METHODS.map((m) => opt(m)),
  });
const responseField = (): Draft =>
  num("response_code", "Response Code", {
    form_type: "input_multi_select",
    form_default: SIP_RESPONSES.map(([c, reason]) => opt(c, `${c} ${reason}`)),
  });

const addressFields = (): Draft[] => [
  text("src_ip", "Source IP", { index: "secondary" }),
  num("src_port", "Source Port", { hide: true }),
  text("dst_ip", "Destination IP", { index: "secondary" }),
  num("dst_port", "Destination Port", { hide: true }),
];

const nodeFields = (): Draft[] => [
  text("node_name", "Node Name", { hide: true }),
  num("capture_id", "Capture ID", { hide: true }),
];

/** `from_tag`/`to_tag` live in data_extra (spec "Message columns of SIP"): virtual, exact match. */
const tagField = (id: "from_tag" | "to_tag", name: string): Draft =>
  text(id, name, { hide: true, category: "tags", virtual: { kind: "data_extra_json", path: id, match: "equals" } });

function sipFields(profile: "call" | "registration" | "default"): FieldObject[] {
  const head: Draft[] = [
    callId(),
    text("from_user", "From User", { index: "secondary", selected: true }),
    text("to_user", "To User", { index: "secondary", selected: true }),
    methodField(),
    responseField(),
  ];
  const registration: Draft[] =
    profile === "registration"
      ? [
          text("aor", "AOR", { index: "secondary", selected: true }),
          text("contact", "Contact"),
          num("expires", "Expires", { hide: true }),
        ]
      : [];
  return positioned([
    ...head,
    ...registration,
    ...addressFields(),
    // a column of the registration table, data_extra elsewhere ("SIP field ids": user_agent)
    text("user_agent", "User-Agent", { hide: profile !== "registration" }),
    text("ruri_user", "R-URI User", { hide: profile === "registration" }),
    text("cseq_method", "CSeq Method", {
      form_type: "input_multi_select",
      hide: true,
      form_default: SIP_METHODS.map((m) => opt(m)),
    }),
    tagField("from_tag", "From Tag"),
    tagField("to_tag", "To Tag"),
    ...nodeFields(),
    text("payload", "Payload", { hide: true }),
  ]);
}

/** Protocols stored in `hep_proto_<N>_default` with the base columns only: correlation id, addresses, node, payload. */
const hepDefaultFields = (correlation: string): FieldObject[] =>
  positioned([callId(correlation), ...addressFields(), ...nodeFields(), text("payload", "Payload")]);

const selectField = (id: string, name: string, options: FieldOption[], extra: Partial<Draft> = {}): Draft =>
  num(id, name, { form_type: "select", selector: options, ...extra });

/** OTLP traces (hepid 200 → otlp_traces; spec "OTLP traces" columns). */
const otlpTraceFields = (): FieldObject[] =>
  positioned([
    text("trace_id", "Trace ID", { index: "primary", sid_type: true, selected: true }),
    text("span_id", "Span ID", { hide: true }),
    text("name", "Span Name", { selected: true }),
    text("service_name", "Service", { index: "secondary", selected: true }),
    // SpanKind of the OTLP data model (trace.proto)
    selectField(
      "kind",
      "Kind",
      ["Unspecified", "Internal", "Server", "Client", "Producer", "Consumer"].map((n, i) => opt(i, n)),
      { hide: true },
    ),
    selectField("status_code", "Status", [opt(0, "Unset"), opt(1, "OK"), opt(2, "Error")]),
    text("scope_name", "Scope", { hide: true }),
  ]);

/** OTLP metrics (hepid 201 → otlp_metrics). `type` is a multi-select (`type` / `types`). */
const otlpMetricFields = (): FieldObject[] =>
  positioned([
    text("name", "Metric", { index: "primary", selected: true }),
    text("type", "Type", {
      form_type: "input_multi_select",
      form_default: ["Gauge", "Sum", "Histogram", "Summary", "ExponentialHistogram"].map((x) => opt(x)),
    }),
    text("service_name", "Service", { index: "secondary", selected: true }),
    text("unit", "Unit", { hide: true }),
    text("scope_name", "Scope", { hide: true }),
  ]);

/** OTLP logs (hepid 202 → otlp_logs). Severity numbers 1..24 in steps of four (logs data model). */
const otlpLogFields = (): FieldObject[] =>
  positioned([
    text("trace_id", "Trace ID", { index: "primary", sid_type: true }),
    text("span_id", "Span ID", { hide: true }),
    text("service_name", "Service", { index: "secondary", selected: true }),
    selectField(
      "severity_number",
      "Severity",
      ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].map((n, i) => opt(i * 4 + 1, n)),
    ),
    text("severity_text", "Severity Text", { hide: true }),
    text("body", "Body", { selected: true }),
  ]);

/** The shipped rows, labelled by the protocol registry (docs/API.md "Protocol types": 35 and 53 are both DNS). */
export function seedMappingRows(): GeneratedMapping[] {
  const row = (hepid: number, profile: string, hepAlias: string, fieldsMapping: FieldObject[]): GeneratedMapping => ({
    guid: stableGuid(`seed:${hepid}:${profile}`),
    source: "seed",
    hepid,
    profile,
    hepAlias,
    fieldsMapping,
  });
  return [
    row(1, "call", protoLabel(1), sipFields("call")),
    row(1, "registration", protoLabel(1), sipFields("registration")),
    row(1, "default", protoLabel(1), sipFields("default")),
    row(5, "default", protoLabel(5), hepDefaultFields("Correlation ID")),
    row(34, "default", protoLabel(34), hepDefaultFields("Correlation ID")),
    row(35, "default", protoLabel(35), hepDefaultFields("Query ID")),
    row(53, "default", protoLabel(53), hepDefaultFields("Query ID")),
    row(100, "default", protoLabel(100), hepDefaultFields("Correlation ID")),
    row(200, "default", protoLabel(200), otlpTraceFields()),
    row(201, "default", protoLabel(201), otlpMetricFields()),
    row(202, "default", protoLabel(202), otlpLogFields()),
  ];
}

export type SeedReport = Record<SyncOutcome, number>;

/** Idempotent: a second run over an untouched database reports every row `unchanged` and writes nothing. */
export function seedMappings(repo: MappingsRepo): SeedReport {
  const report: SeedReport = { inserted: 0, updated: 0, unchanged: 0, kept: 0 };
  for (const m of seedMappingRows()) report[repo.syncGenerated(m)]++;
  return report;
}
