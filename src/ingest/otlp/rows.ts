/**
 * One OTLP export request → rows of `otlp_traces`, `otlp_metrics` or `otlp_logs` (docs/OTLP.md
 * "Columns"). An item that cannot be stored (a malformed trace or span id, a metric without a
 * name, a row over the lake's line cap) is rejected alone and counted for the OTLP partial success;
 * the other items of the request are written.
 */
import type { RowWriter } from "../../core/index.ts";
import { ITEM_TYPES } from "./proto.ts";
import { otlpTableKey, type OtlpSignal } from "./tables.ts";
import {
  anyValue,
  attributes,
  big,
  clean,
  enumNum,
  get,
  id,
  isObj,
  list,
  nanosToUs,
  num,
  text,
  toJson,
  TooDeep,
  type Obj,
} from "./values.ts";

export interface RowCounts {
  /** Items written (spans, data points, log records). */
  written: number;
  /** Items rejected for their content (partial success). */
  rejected: number;
  /** Items the lake did not take (write buffer full or stopping). */
  refused: number;
  /** Distinct reasons of the rejections, first few. */
  reasons: string[];
}

export interface RowContext {
  row: (key: string) => RowWriter | undefined;
  /** Receive time (epoch µs): the timestamp of items that carry none. */
  nowUs: number;
  /** The request came as protobuf (items are protobufjs messages) rather than OTLP/JSON. */
  protobuf: boolean;
}

const RESOURCE_FIELD: Record<OtlpSignal, string> = {
  traces: "resourceSpans",
  metrics: "resourceMetrics",
  logs: "resourceLogs",
};
const SCOPE_FIELD: Record<OtlpSignal, string> = { traces: "scopeSpans", metrics: "scopeMetrics", logs: "scopeLogs" };
const METRIC_TYPES = [
  ["gauge", "Gauge"],
  ["sum", "Sum"],
  ["histogram", "Histogram"],
  ["exponentialHistogram", "ExponentialHistogram"],
  ["summary", "Summary"],
] as const;
const MAX_REASONS = 5;

interface Group {
  /** Why every item of the group is rejected (its resource cannot be read), or undefined. */
  bad?: string;
  serviceName: string;
  resourceAttrs: Obj;
  scopeName: string;
  items: unknown[];
}

/** Every (resource, scope) group of the request with its items (spans, metrics, log records). */
function groups(signal: OtlpSignal, request: unknown): Group[] {
  const out: Group[] = [];
  const itemField = signal === "traces" ? "spans" : signal === "metrics" ? "metrics" : "logRecords";
  for (const rs of list(request, RESOURCE_FIELD[signal])) {
    let resourceAttrs: Obj = {};
    let bad: string | undefined;
    try {
      resourceAttrs = attributes(list(get(rs, "resource"), "attributes"));
    } catch (e) {
      bad = tooDeep(e);
    }
    const svc = resourceAttrs["service.name"];
    const serviceName = typeof svc === "string" ? svc : "";
    for (const ss of list(rs, SCOPE_FIELD[signal]))
      out.push({
        ...(bad ? { bad } : {}),
        serviceName,
        resourceAttrs,
        scopeName: text(get(ss, "scope"), "name"),
        items: list(ss, itemField),
      });
  }
  return out;
}

/** Items of the request: spans, data points or log records (the unit the partial success counts). */
export function countItems(signal: OtlpSignal, request: unknown): number {
  let n = 0;
  for (const g of groups(signal, request)) {
    if (signal !== "metrics") n += g.items.length;
    else for (const m of g.items) n += dataPoints(m)?.points.length ?? 0;
  }
  return n;
}

export function writeRows(signal: OtlpSignal, request: unknown, ctx: RowContext): RowCounts {
  const counts: RowCounts = { written: 0, rejected: 0, refused: 0, reasons: [] };
  const key = otlpTableKey(signal);
  const reject = (n: number, reason: string) => {
    counts.rejected += n;
    if (counts.reasons.length < MAX_REASONS && !counts.reasons.includes(reason)) counts.reasons.push(reason);
  };
  /** Ends a row; false when the lake refused it or it is over the line cap (both counted here). */
  const take = (w: RowWriter | undefined, fill: (w: RowWriter) => RowWriter, what: string): void => {
    if (!w) {
      counts.refused++;
      return;
    }
    if (fill(w).end() === false) reject(1, `${what} over 1 MiB once stored; split it`);
    else counts.written++;
  };
  /** Every value of an item is computed before its row is started, so a throw never leaves half a row. */
  const guard = (n: number, write: () => void) => {
    try {
      write();
    } catch (e) {
      reject(n, tooDeep(e));
    }
  };
  for (const g of groups(signal, request)) {
    if (g.bad) {
      reject(
        signal === "metrics"
          ? g.items.reduce((n: number, m) => n + (dataPoints(m)?.points.length ?? 0), 0)
          : g.items.length,
        g.bad,
      );
      continue;
    }
    const resource = toJson(g.resourceAttrs);
    const service = clean(g.serviceName);
    const scope = clean(g.scopeName);
    if (signal === "traces")
      for (const s of g.items) guard(1, () => writeSpan(s, ctx, key, resource, service, scope, take, reject));
    else if (signal === "logs") for (const r of g.items) guard(1, () => writeLog(r, ctx, key, service, take, reject));
    else for (const m of g.items) writeMetric(m, ctx, key, service, scope, take, reject, guard);
  }
  return counts;
}

type PointType = "NumberDataPoint" | "HistogramDataPoint" | "ExponentialHistogramDataPoint" | "SummaryDataPoint";
type Take = (w: RowWriter | undefined, fill: (w: RowWriter) => RowWriter, what: string) => void;
type Reject = (n: number, reason: string) => void;

const orNull = (s: string) => (s === "" ? null : clean(s));

/** The item in OTLP/JSON: re-encoded from protobuf, or the JSON object as the client sent it. */
function raw(item: unknown, ctx: RowContext, type: keyof typeof ITEM_TYPES, extra?: Obj): string {
  const obj = ctx.protobuf ? ITEM_TYPES[type].toObject(item as never, { longs: String, enums: Number }) : (item as Obj);
  return toJson(extra ? { ...obj, ...extra } : obj);
}

function writeSpan(
  s: unknown,
  ctx: RowContext,
  key: string,
  resource: string,
  service: string,
  scope: string,
  take: Take,
  reject: Reject,
): void {
  const traceId = id(s, "traceId", 16);
  const spanId = id(s, "spanId", 8);
  const parent = id(s, "parentSpanId", 8);
  if (!traceId || !spanId)
    return reject(1, "span with a missing or malformed trace_id (16 bytes) or span_id (8 bytes)");
  if (parent === undefined) return reject(1, "span with a malformed parent_span_id (8 bytes)");
  const start = big(get(s, "startTimeUnixNano")) ?? 0n;
  const end = big(get(s, "endTimeUnixNano")) ?? 0n;
  const status = get(s, "status");
  const attrs = toJson(attributes(list(s, "attributes")));
  const rawJson = raw(s, ctx, "span");
  take(
    ctx.row(key),
    (w) =>
      w
        .time(nanosToUs(start) ?? ctx.nowUs)
        .time(nanosToUs(end) ?? null)
        .int(start > 0n && end >= start ? end - start : null)
        .str(traceId)
        .str(spanId)
        .str(orNull(parent))
        .str(clean(text(s, "name")))
        .int(enumNum(s, "kind") ?? 0)
        .int(enumNum(status, "code") ?? 0)
        .str(orNull(text(status, "message")))
        .str(service)
        .str(scope)
        .str(resource)
        .str(attrs)
        .str(rawJson),
    "span",
  );
}

/** Logs have no scope column (docs/OTLP.md "Columns"). */
function writeLog(r: unknown, ctx: RowContext, key: string, service: string, take: Take, reject: Reject): void {
  const traceId = id(r, "traceId", 16);
  const spanId = id(r, "spanId", 8);
  if (traceId === undefined || spanId === undefined)
    return reject(1, "log record with a malformed trace_id (16 bytes) or span_id (8 bytes)");
  const observed = nanosToUs(get(r, "observedTimeUnixNano"));
  const body = get(r, "body");
  const value = isObj(body) ? anyValue(body) : null;
  const bodyText =
    value === null
      ? null
      : typeof value === "string"
        ? clean(value)
        : typeof value === "object"
          ? toJson(value)
          : String(value);
  const bodyJson = value === null || typeof value === "string" ? null : toJson(value);
  const attrs = toJson(attributes(list(r, "attributes")));
  const rawJson = raw(r, ctx, "logRecord");
  take(
    ctx.row(key),
    (w) =>
      w
        .time(nanosToUs(get(r, "timeUnixNano")) ?? observed ?? ctx.nowUs)
        .time(observed ?? null)
        .int(enumNum(r, "severityNumber") ?? 0)
        .str(orNull(text(r, "severityText")))
        .str(bodyText)
        .str(bodyJson)
        .str(orNull(traceId))
        .str(orNull(spanId))
        .str(service)
        .str(attrs)
        .str(rawJson),
    "log record",
  );
}

/** The metric's data points and its type name, or undefined when it carries no data. */
function dataPoints(m: unknown): { type: string; field: string; data: unknown; points: unknown[] } | undefined {
  for (const [field, type] of METRIC_TYPES) {
    const data = get(m, field);
    if (isObj(data)) return { type, field, data, points: list(data, "dataPoints") };
  }
  return undefined;
}

function writeMetric(
  m: unknown,
  ctx: RowContext,
  key: string,
  service: string,
  scope: string,
  take: Take,
  reject: Reject,
  guard: (n: number, write: () => void) => void,
): void {
  const dp = dataPoints(m);
  if (!dp) return;
  const name = text(m, "name");
  if (name === "") return reject(dp.points.length, "metric without a name");
  const description = clean(text(m, "description"));
  const unit = clean(text(m, "unit"));
  // Temporality and monotonicity belong to the metric, not the point: raw keeps them beside it.
  const temporality = enumNum(dp.data, "aggregationTemporality");
  const monotonic = get(dp.data, "isMonotonic");
  const extra: Obj = {
    ...(temporality ? { aggregationTemporality: temporality } : {}),
    ...(monotonic === true ? { isMonotonic: true } : {}),
  };
  const { field, type } = dp;
  const pointType: PointType =
    dp.field === "gauge" || dp.field === "sum"
      ? "NumberDataPoint"
      : dp.field === "summary"
        ? "SummaryDataPoint"
        : dp.field === "histogram"
          ? "HistogramDataPoint"
          : "ExponentialHistogramDataPoint";
  for (const p of dp.points) guard(1, () => writePoint(p));
  function writePoint(p: unknown): void {
    let dbl: number | null = null;
    let int: bigint | null = null;
    if (field === "gauge" || field === "sum") {
      const asInt = get(p, "asInt");
      if (asInt !== undefined) int = big(asInt) ?? null;
      else dbl = num(p, "asDouble") ?? null;
    } else {
      // Histograms and summaries: the sum and the count (the buckets and quantiles are in raw).
      dbl = num(p, "sum") ?? null;
      int = big(get(p, "count")) ?? 0n;
    }
    const attrs = toJson(attributes(list(p, "attributes")));
    const rawJson = rawPoint(p, ctx, pointType, extra);
    take(
      ctx.row(key),
      (w) =>
        w
          .time(nanosToUs(get(p, "timeUnixNano")) ?? ctx.nowUs)
          .str(clean(name))
          .str(description)
          .str(unit)
          .str(type)
          .float(dbl)
          .int(int)
          .str(service)
          .str(scope)
          .str(attrs)
          .str(rawJson),
      "data point",
    );
  }
}

function rawPoint(p: unknown, ctx: RowContext, type: PointType, extra: Obj): string {
  const obj = ctx.protobuf ? ITEM_TYPES[type].toObject(p as never, { longs: String, enums: Number }) : (p as Obj);
  return toJson(Object.keys(extra).length ? { ...obj, ...extra } : obj);
}

/** The rejection reason of an item whose values nest too deeply (our limit, or the stack's); other errors are ours. */
function tooDeep(e: unknown): string {
  if (e instanceof TooDeep) return e.message;
  if (e instanceof RangeError) return "a value nests too deeply to be stored";
  throw e;
}
