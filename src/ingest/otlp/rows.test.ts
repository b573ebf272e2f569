import { describe, expect, test } from "bun:test";
import type { RowWriter } from "../../core/index.ts";
import { MESSAGES } from "./proto.ts";
import { countItems, writeRows } from "./rows.ts";
import { otlpTableDef } from "./tables.ts";

/** A RowWriter that keeps each row as an object by column (the lake's writer is not under test here). */
function recorder(signal: "traces" | "metrics" | "logs", opts: { full?: boolean } = {}) {
  const names = otlpTableDef(signal)
    .columns.filter((c) => !c.derived)
    .map((c) => c.name);
  const rows: Array<Record<string, unknown>> = [];
  let cur: unknown[] = [];
  const push = (v: unknown) => (cur.push(v ?? null), w);
  const w: RowWriter = {
    str: push,
    bytes: (v) => push(new TextDecoder().decode(v)),
    int: push,
    float: push,
    bool: push,
    time: push,
    end: () => {
      if (opts.full) {
        cur = [];
        return false;
      }
      expect(cur.length).toBe(names.length);
      rows.push(Object.fromEntries(names.map((n, i) => [n, cur[i]])));
      cur = [];
      return true;
    },
  };
  return { rows, row: () => w };
}

const NOW_US = 1_795_000_000_000_000;
const T_NS = "1795000000123456789";

describe("OTLP rows (docs/OTLP.md Columns)", () => {
  test("OTLP/JSON with snake_case names, 64-bit integers as text, every AnyValue kind, NUL cleaned", () => {
    const req = {
      resource_spans: [
        {
          resource: { attributes: [{ key: "service.name", value: { string_value: "sbc\u0000a" } }] },
          scope_spans: [
            {
              scope: { name: "kamailio" },
              spans: [
                {
                  trace_id: "0AF7651916CD43DD8448EB211C80319C",
                  span_id: "b7ad6b7169203331",
                  parent_span_id: "",
                  name: "INVITE",
                  kind: 2,
                  start_time_unix_nano: T_NS,
                  end_time_unix_nano: "1795000000223456789",
                  attributes: [
                    { key: "big", value: { int_value: "9007199254740993" } },
                    { key: "small", value: { intValue: 5060 } },
                    { key: "ok", value: { boolValue: true } },
                    { key: "r", value: { doubleValue: "NaN" } },
                    { key: "list", value: { arrayValue: { values: [{ stringValue: "a" }, { intValue: "1" }] } } },
                    { key: "map", value: { kvlistValue: { values: [{ key: "k", value: { stringValue: "v" } }] } } },
                    { key: "bin", value: { bytesValue: "AQI=" } },
                  ],
                  status: { code: 2, message: "busy" },
                },
              ],
            },
          ],
        },
      ],
    };
    const r = recorder("traces");
    const c = writeRows("traces", req, { row: r.row, nowUs: NOW_US, protobuf: false });
    expect(c).toEqual({ written: 1, rejected: 0, refused: 0, reasons: [] });
    const row = r.rows[0]!;
    expect(row).toMatchObject({
      timestamp: 1795000000123456,
      end_timestamp: 1795000000223456,
      duration_ns: 100000000n,
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      parent_span_id: null,
      kind: 2,
      status_code: 2,
      status_message: "busy",
      service_name: "sbc\uFFFDa",
      scope_name: "kamailio",
    });
    expect(JSON.parse(String(row.span_attrs))).toEqual({
      big: "9007199254740993",
      small: 5060,
      ok: true,
      r: "NaN",
      list: ["a", 1],
      map: { k: "v" },
      bin: "AQI=",
    });
  });

  test("protobuf spans: ids as hex, raw in OTLP/JSON; bad ids rejected alone", () => {
    const T = MESSAGES.traces.request;
    const span = (traceId: Buffer, name: string) => ({
      traceId,
      spanId: Buffer.from("b7ad6b7169203331", "hex"),
      name,
      startTimeUnixNano: T_NS,
    });
    const msg = T.decode(
      T.encode(
        T.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    span(Buffer.from("0af7651916cd43dd8448eb211c80319c", "hex"), "good"),
                    span(Buffer.from("0af7", "hex"), "short"),
                    span(Buffer.alloc(0), "none"),
                  ],
                },
              ],
            },
          ],
        }),
      ).finish(),
    );
    expect(countItems("traces", msg)).toBe(3);
    const r = recorder("traces");
    const c = writeRows("traces", msg, { row: r.row, nowUs: NOW_US, protobuf: true });
    expect(c.written).toBe(1);
    expect(c.rejected).toBe(2);
    expect(c.reasons).toEqual(["span with a missing or malformed trace_id (16 bytes) or span_id (8 bytes)"]);
    expect(r.rows[0]).toMatchObject({
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      span_id: "b7ad6b7169203331",
      end_timestamp: null,
      duration_ns: null,
      service_name: "",
    });
    expect(JSON.parse(String(r.rows[0]!.raw))).toEqual({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      name: "good",
      startTimeUnixNano: T_NS,
    });
  });

  test("metrics: Gauge/Sum by value kind, Histogram and Summary as sum and count, unnamed rejected, temporality in raw", () => {
    const dp = (v: Record<string, unknown>) => ({
      timeUnixNano: T_NS,
      attributes: [{ key: "trunk", value: { stringValue: "a" } }],
      ...v,
    });
    const req = {
      resourceMetrics: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "proxy" } }] },
          scopeMetrics: [
            {
              scope: { name: "m" },
              metrics: [
                { name: "g", gauge: { dataPoints: [dp({ asDouble: 1.5 })] } },
                {
                  name: "s",
                  unit: "1",
                  sum: {
                    aggregationTemporality: 2,
                    isMonotonic: true,
                    dataPoints: [dp({ asInt: "9223372036854775807" })],
                  },
                },
                {
                  name: "h",
                  histogram: {
                    dataPoints: [dp({ count: "3", sum: 900, bucketCounts: ["1", "2"], explicitBounds: [250] })],
                  },
                },
                {
                  name: "q",
                  summary: { dataPoints: [dp({ count: 2, sum: 4, quantileValues: [{ quantile: 0.5, value: 2 }] })] },
                },
                { name: "e", exponentialHistogram: { dataPoints: [dp({ count: 1, scale: 2 })] } },
                { name: "", gauge: { dataPoints: [dp({ asDouble: 1 }), dp({ asDouble: 2 })] } },
                { name: "nodata" },
              ],
            },
          ],
        },
      ],
    };
    expect(countItems("metrics", req)).toBe(7);
    const r = recorder("metrics");
    const c = writeRows("metrics", req, { row: r.row, nowUs: NOW_US, protobuf: false });
    expect(c).toEqual({ written: 5, rejected: 2, refused: 0, reasons: ["metric without a name"] });
    expect(r.rows.map((x) => [x.name, x.type, x.value_double, x.value_int])).toEqual([
      ["g", "Gauge", 1.5, null],
      ["s", "Sum", null, 9223372036854775807n],
      ["h", "Histogram", 900, 3n],
      ["q", "Summary", 4, 2n],
      ["e", "ExponentialHistogram", null, 1n],
    ]);
    expect(JSON.parse(String(r.rows[1]!.raw))).toMatchObject({ aggregationTemporality: 2, isMonotonic: true });
    expect(JSON.parse(String(r.rows[0]!.attributes))).toEqual({ trunk: "a" });
  });

  test("logs: body kinds, time falls back to observed then receive time, bad ids rejected", () => {
    const rec = (v: Record<string, unknown>) => v;
    const req = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                rec({
                  timeUnixNano: T_NS,
                  body: { stringValue: "text" },
                  severityNumber: 17,
                  severityText: "ERROR",
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                }),
                rec({
                  observedTimeUnixNano: T_NS,
                  body: { kvlistValue: { values: [{ key: "a", value: { intValue: 1 } }] } },
                }),
                rec({ body: { intValue: "42" } }),
                rec({ body: { stringValue: "bad" }, traceId: "xyz" }),
              ],
            },
          ],
        },
      ],
    };
    const r = recorder("logs");
    const c = writeRows("logs", req, { row: r.row, nowUs: NOW_US, protobuf: false });
    expect(c.written).toBe(3);
    expect(c.rejected).toBe(1);
    expect(
      r.rows.map((x) => [x.timestamp, x.observed_timestamp, x.body, x.body_json, x.trace_id, x.severity_number]),
    ).toEqual([
      [1795000000123456, null, "text", null, "0af7651916cd43dd8448eb211c80319c", 17],
      [1795000000123456, 1795000000123456, '{"a":1}', '{"a":1}', null, 0],
      [NOW_US, null, "42", "42", null, 0],
    ]);
  });

  test("enums by proto name as well as by number (protobuf JSON mapping): span kind, status code, severity", () => {
    const traces = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: "0af7651916cd43dd8448eb211c80319c",
                  spanId: "b7ad6b7169203331",
                  name: "INVITE",
                  kind: "SPAN_KIND_CLIENT",
                  status: { code: "STATUS_CODE_ERROR" },
                  startTimeUnixNano: T_NS,
                  endTimeUnixNano: T_NS,
                },
              ],
            },
          ],
        },
      ],
    };
    const t = recorder("traces");
    expect(writeRows("traces", traces, { row: t.row, nowUs: NOW_US, protobuf: false }).written).toBe(1);
    expect([t.rows[0]!.kind, t.rows[0]!.status_code]).toEqual([3, 2]);
    const logs = {
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { body: { stringValue: "w" }, severityNumber: "SEVERITY_NUMBER_WARN2" },
                { body: { stringValue: "n" }, severityNumber: "NOT_A_LEVEL" },
              ],
            },
          ],
        },
      ],
    };
    const l = recorder("logs");
    writeRows("logs", logs, { row: l.row, nowUs: NOW_US, protobuf: false });
    expect(l.rows.map((x) => x.severity_number)).toEqual([14, 0]);
  });

  test("a row the lake cannot keep (over its line cap) is rejected; a lake that refuses rows counts them", () => {
    const req = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: "x" } }] }] }] };
    const full = recorder("logs", { full: true });
    expect(writeRows("logs", req, { row: full.row, nowUs: NOW_US, protobuf: false })).toEqual({
      written: 0,
      rejected: 1,
      refused: 0,
      reasons: ["log record over 1 MiB once stored; split it"],
    });
    expect(writeRows("logs", req, { row: () => undefined, nowUs: NOW_US, protobuf: false })).toEqual({
      written: 0,
      rejected: 0,
      refused: 1,
      reasons: [],
    });
  });

  test("values nested deeper than 32 levels reject their item, never the request (nor the stack)", () => {
    const nest = (n: number): Record<string, unknown> =>
      n === 0 ? { stringValue: "x" } : { arrayValue: { values: [nest(n - 1)] } };
    const req = {
      resourceLogs: [
        {
          scopeLogs: [
            { logRecords: [{ body: nest(32) }, { body: nest(33) }, { attributes: [{ key: "k", value: nest(5000) }] }] },
          ],
        },
      ],
    };
    const r = recorder("logs");
    const c = writeRows("logs", req, { row: r.row, nowUs: NOW_US, protobuf: false });
    expect(c).toEqual({
      written: 1,
      rejected: 2,
      refused: 0,
      reasons: ["a value nests arrays or maps deeper than 32 levels"],
    });
    const deepResource = {
      resourceSpans: [{ resource: { attributes: [{ key: "k", value: nest(40) }] }, scopeSpans: [{ spans: [{}, {}] }] }],
    };
    expect(
      writeRows("traces", deepResource, { row: recorder("traces").row, nowUs: NOW_US, protobuf: false }).rejected,
    ).toBe(2);
  });
});
