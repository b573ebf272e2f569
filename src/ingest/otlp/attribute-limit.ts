/**
 * Attributes per item at most (docs/OTLP.md "Limits"), like OpenTelemetry's attribute count limit:
 * every list of attributes (of a resource, scope, span, span event, span link, log record, data
 * point, exemplar, metric metadata) keeps its first `max` entries; the rest are dropped, added to
 * the item's `dropped_attributes_count` where the message has one, and counted for the answer and
 * the metrics. The entries of a map value (a kvlist inside an attribute or a log body) are one
 * attribute's value and are not counted.
 *
 * Protobuf: the limit holds while protobufjs decodes, so a span with 400 000 attributes never
 * becomes 400 000 objects. protobufjs' generated decoder calls `types[i].decode(reader, length)`
 * on the field's Type object for every nested message, so the `decode` of KeyValue and of each
 * attribute owner is wrapped here once the types are set up: an owner counts its KeyValues, and one
 * over the limit is skipped (`reader.skip(length)`, its bytes already checked by wire.ts) and pushed
 * as a marker the owner filters out. OTLP/JSON: JSON.parse has built the objects already; the lists
 * are cut after it, so what follows (rows, raw JSON) still stays small.
 */
import type protobuf from "protobufjs";
import { OTLP_ROOT } from "./proto.ts";
import { type Obj, get, isObj, list } from "./values.ts";

/** Types of proto.ts with an attribute list, the list's field, and whether they carry dropped_attributes_count. */
const OWNERS: ReadonlyArray<readonly [type: string, field: string, dropped: boolean]> = [
  ["Resource", "attributes", true],
  ["Scope", "attributes", true],
  ["Span", "attributes", true],
  ["SpanEvent", "attributes", true],
  ["SpanLink", "attributes", true],
  ["LogRecord", "attributes", true],
  ["NumberDataPoint", "attributes", false],
  ["HistogramDataPoint", "attributes", false],
  ["ExponentialHistogramDataPoint", "attributes", false],
  ["SummaryDataPoint", "attributes", false],
  ["Exemplar", "filteredAttributes", false],
  ["Metric", "metadata", false],
];

/** A KeyValue over the limit: pushed by KeyValue.decode, filtered out by its owner. */
const DROPPED = Object.freeze({});

type Decode = (r: protobuf.Reader, l?: number, z?: number, q?: number, g?: unknown) => protobuf.Message;

/**
 * The state of the one decode running (decoding is synchronous): the limit, whether a KeyValue
 * belongs to an owner (not to a map value), the owner's count and drops so far, the request's drops.
 * Plain fields rather than an object per owner: this runs for every span and attribute.
 */
const state = { limit: Number.POSITIVE_INFINITY, inOwner: false, count: 0, ownerDropped: 0, dropped: 0 };

let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const type = (name: string) => {
    const t = OTLP_ROOT.lookupType(`svc.otlp.${name}`);
    t.setup();
    return t;
  };
  const kv = type("KeyValue");
  const kvDecode = kv.decode as Decode;
  (kv as { decode: Decode }).decode = function decodeKeyValue(r, l, z, q, g) {
    if (state.inOwner && ++state.count > state.limit && l !== undefined) {
      state.ownerDropped++;
      r.skip(l);
      return DROPPED as protobuf.Message;
    }
    return kvDecode.call(this, r, l, z, q, g);
  };
  // A map value's entries belong to one attribute: no owner counts them. No try/finally here or
  // below: a throw abandons the whole decode, and decodeLimited resets the state.
  const kvl = type("KeyValueList");
  const kvlDecode = kvl.decode as Decode;
  (kvl as { decode: Decode }).decode = function decodeKeyValueList(r, l, z, q, g) {
    const inOwner = state.inOwner;
    state.inOwner = false;
    const m = kvlDecode.call(this, r, l, z, q, g);
    state.inOwner = inOwner;
    return m;
  };
  for (const [name, field, hasDropped] of OWNERS) {
    const t = type(name);
    const orig = t.decode as Decode;
    (t as { decode: Decode }).decode = function decodeOwner(r, l, z, q, g) {
      const { inOwner, count, ownerDropped } = state;
      state.inOwner = true;
      state.count = 0;
      state.ownerDropped = 0;
      const m = orig.call(this, r, l, z, q, g);
      const dropped = state.ownerDropped;
      state.inOwner = inOwner;
      state.count = count;
      state.ownerDropped = ownerDropped;
      if (dropped > 0) {
        const o = m as unknown as Obj;
        o[field] = (o[field] as unknown[]).filter((x) => x !== DROPPED);
        if (hasDropped) o.droppedAttributesCount = Number(o.droppedAttributesCount ?? 0) + dropped;
        state.dropped += dropped;
      }
      return m;
    };
  }
}

/**
 * Decodes `body` as `type` keeping at most `limit` attributes per owner: the message and how many
 * attributes were dropped. Throws what protobufjs throws for a body that does not decode.
 */
export function decodeLimited(
  type: protobuf.Type,
  body: Uint8Array,
  limit: number,
): { message: protobuf.Message; dropped: number } {
  install();
  Object.assign(state, { limit, inOwner: false, count: 0, ownerDropped: 0, dropped: 0 });
  try {
    const message = type.decode(body);
    return { message, dropped: state.dropped };
  } finally {
    Object.assign(state, { limit: Number.POSITIVE_INFINITY, inOwner: false, count: 0, ownerDropped: 0 });
  }
}

const RESOURCE_FIELD = { traces: "resourceSpans", metrics: "resourceMetrics", logs: "resourceLogs" } as const;
const SCOPE_FIELD = { traces: "scopeSpans", metrics: "scopeMetrics", logs: "scopeLogs" } as const;
const POINT_HOLDERS = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"] as const;

/** Cuts one attribute list of an OTLP/JSON object in place; returns how many were dropped. */
function cut(o: unknown, camel: string, limit: number, hasDropped: boolean): number {
  if (!isObj(o)) return 0;
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const key = Object.hasOwn(o, camel) ? camel : Object.hasOwn(o, snake) ? snake : undefined;
  const v = key === undefined ? undefined : o[key];
  if (!Array.isArray(v) || v.length <= limit) return 0;
  const n = v.length - limit;
  v.length = limit;
  if (hasDropped) {
    const dk = Object.hasOwn(o, "dropped_attributes_count") ? "dropped_attributes_count" : "droppedAttributesCount";
    const before = Number(o[dk] ?? 0);
    o[dk] = (Number.isFinite(before) ? before : 0) + n;
  }
  return n;
}

/** The OTLP/JSON counterpart of `decodeLimited`: cuts every attribute list of a parsed request in place. */
export function limitJsonAttributes(signal: keyof typeof RESOURCE_FIELD, request: unknown, limit: number): number {
  let n = 0;
  for (const rs of list(request, RESOURCE_FIELD[signal])) {
    n += cut(get(rs, "resource"), "attributes", limit, true);
    for (const ss of list(rs, SCOPE_FIELD[signal])) {
      n += cut(get(ss, "scope"), "attributes", limit, true);
      if (signal === "traces") {
        for (const s of list(ss, "spans")) {
          n += cut(s, "attributes", limit, true);
          for (const e of list(s, "events")) n += cut(e, "attributes", limit, true);
          for (const k of list(s, "links")) n += cut(k, "attributes", limit, true);
        }
      } else if (signal === "logs") {
        for (const r of list(ss, "logRecords")) n += cut(r, "attributes", limit, true);
      } else {
        for (const m of list(ss, "metrics")) {
          n += cut(m, "metadata", limit, false);
          for (const holder of POINT_HOLDERS) {
            for (const p of list(get(m, holder), "dataPoints")) {
              n += cut(p, "attributes", limit, false);
              for (const x of list(p, "exemplars")) n += cut(x, "filteredAttributes", limit, false);
            }
          }
        }
      }
    }
  }
  return n;
}
