import { describe, expect, test } from "bun:test";
import { buildWhere, type FilterInput } from "./filters.ts";

const TRACES = new Set([
  "timestamp",
  "end_timestamp",
  "duration_ns",
  "trace_id",
  "span_id",
  "parent_span_id",
  "name",
  "kind",
  "status_code",
  "status_message",
  "service_name",
  "scope_name",
  "resource_attrs",
  "span_attrs",
  "raw",
  "date",
]);
const METRICS = new Set([
  "timestamp",
  "name",
  "description",
  "unit",
  "type",
  "value_double",
  "value_int",
  "service_name",
  "scope_name",
  "attributes",
  "raw",
  "date",
]);
const LOGS = new Set([
  "timestamp",
  "observed_timestamp",
  "severity_number",
  "severity_text",
  "body",
  "body_json",
  "trace_id",
  "span_id",
  "service_name",
  "attributes",
  "raw",
  "date",
]);

const where = (protoType: number, columns: Set<string>, filter: Record<string, unknown>) =>
  buildWhere({ protoType, eventType: "default", filter, virtualFields: new Map(), columns } satisfies FilterInput);

describe("OTLP structured search → WHERE (docs/API.md search form rules 3 and 5)", () => {
  test.each([
    [200, TRACES, { trace_id: "ABCDEF" }, `("trace_id" = $1)`, ["abcdef"]],
    [200, TRACES, { name: "INVITE%" }, `("name" LIKE $1)`, ["INVITE%"]],
    [200, TRACES, { service_name: "sbc;proxy" }, `("service_name" = $1 OR "service_name" = $2)`, ["sbc", "proxy"]],
    [200, TRACES, { status_code: 2 }, `"status_code" IN ($1)`, [2]],
    [201, METRICS, { types: ["gauge", "Sum"] }, `"type" IN ($1, $2)`, ["Gauge", "Sum"]],
    [201, METRICS, { type: "Histogram" }, `"type" IN ($1)`, ["Histogram"]],
    [202, LOGS, { severity_number: "17;21" }, `"severity_number" IN ($1, $2)`, [17, 21]],
    [
      202,
      LOGS,
      { body: "%timeout%", raw: "%timeout%" },
      `("body" LIKE $1) AND ("raw" LIKE $2)`,
      ["%timeout%", "%timeout%"],
    ],
    [202, LOGS, { payload: "x" }, `(contains("raw", $1))`, ["x"]],
    [202, LOGS, { body: "timeout;503" }, `(contains("body", $1) OR contains("body", $2))`, ["timeout", "503"]],
    // A metric has no trace_id, SIP keys mean nothing here: ignored (rule 2).
    [201, METRICS, { trace_id: "ab", method: "INVITE", caller: "1001" }, "true", []],
  ])("proto %d %j", (proto, cols, filter, sql, params) => {
    const w = where(proto, cols, filter);
    expect(w.sql).toBe(sql);
    expect(w.params).toEqual(params);
  });

  test("sip_call_id looks in the span's or record's attributes", () => {
    const t = where(200, TRACES, { sip_call_id: "a@b" });
    expect(t.sql).toContain(`json_extract_string("span_attrs", '$."sip.call_id"') = $1`);
    expect(where(202, LOGS, { sip_call_id: "a@b" }).sql).toContain(
      `json_extract_string("attributes", '$."Call-ID"') = $1`,
    );
  });

  test("bad values are a 400 naming the field", () => {
    expect(() => where(201, METRICS, { type: "Counter" })).toThrow(/filter.type/);
    expect(() => where(202, LOGS, { severity_number: "warn" })).toThrow(/filter.severity_number/);
  });
});
