import { t } from "elysia";
import type { Lake } from "../../lake/index.ts";
import { SIP_CALL_ID_ATTRIBUTES } from "./otlp-filters.ts";
import { isoFromUs as isoUs } from "../../core/index.ts";
import { NodeReportSchema, type Gathered, type OverNodes } from "./fan-out.ts";

/**
 * OpenTelemetry spans and log records of a call (docs/OTLP.md "Linking to calls"): rows of
 * `otlp_traces` and `otlp_logs` whose attributes carry one of the call's Call-IDs (correlated legs
 * included) within the call's window, oldest first. `POST /transactions/otlp`; the call view's
 * OpenTelemetry tab lists them. With coordinator.nodes every node's rows too, joined in the same
 * order (otlpOverNodes; docs/ARCHITECTURE.md "Reads over several nodes").
 */
export const OtlpRelatedItem = t.Object({
  kind: t.Union([t.Literal("span"), t.Literal("log")], {
    description: "span: a row of otlp_traces (proto 200); log: a row of otlp_logs (proto 202)",
  }),
  timestamp: t.String({ description: "span start or log time, ISO 8601 with microseconds" }),
  timestamp_us: t.Number({ description: "the same in epoch microseconds" }),
  sip_call_id: t.String({ description: "the Call-ID the row carries (one of data.sessions)" }),
  service_name: t.Union([t.String(), t.Null()]),
  text: t.Union([t.String(), t.Null()], { description: "span name, or log body" }),
  trace_id: t.Union([t.String(), t.Null()]),
  span_id: t.Union([t.String(), t.Null()]),
  duration_ns: t.Union([t.Number(), t.Null()], { description: "spans: duration in ns; logs: null" }),
  status_code: t.Union([t.Integer(), t.Null()], { description: "spans: 0 unset, 1 ok, 2 error; logs: null" }),
  severity_number: t.Union([t.Integer(), t.Null()], { description: "logs: 1-24; spans: null" }),
  severity_text: t.Union([t.String(), t.Null()]),
  attributes: t.Record(t.String(), t.Unknown(), { description: "the span's or record's attributes" }),
});
export type OtlpRelatedItemT = typeof OtlpRelatedItem.static;

export const OtlpRelatedResponse = t.Object({
  data: t.Object({
    items: t.Array(OtlpRelatedItem),
    sessions: t.Array(t.String(), {
      description: "the call's Call-IDs (correlated legs included) the rows were matched by",
    }),
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }, { description: "the time window searched" }),
  }),
  meta: t.Object({
    pagination: t.Object({
      limit: t.Integer(),
      total: t.Integer({ description: "rows of the call; more than the items when the limit cut them" }),
    }),
    nodes: t.Optional(
      t.Array(NodeReportSchema, {
        description: 'with coordinator.nodes: what each node did (docs/ARCHITECTURE.md "Reads over several nodes")',
      }),
    ),
    partial: t.Optional(t.Boolean({ description: "a node failed or timed out: its rows are missing" })),
  }),
});

/** `POST /api/v1/transactions/otlp` of a node (src/cluster/node-reads.ts): the call's Call-IDs and window from the coordinator's merged call view. */
export const NodeOtlpBody = t.Object({
  sessions: t.Array(t.String(), { maxItems: 10_000 }),
  window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }),
  limit: t.Integer({ minimum: 1, maximum: 50_000 }),
  buffer_only: t.Optional(
    t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" }),
  ),
});

/** Oldest first; rows of one instant by kind, trace, span and text, so one lake and several nodes list them alike. */
const byTime = (a: OtlpRelatedItemT, b: OtlpRelatedItemT) => {
  const text = (x: OtlpRelatedItemT) =>
    `${x.kind}\u0000${x.trace_id ?? ""}\u0000${x.span_id ?? ""}\u0000${x.text ?? ""}`;
  const [x, y] = [text(a), text(b)];
  return a.timestamp_us - b.timestamp_us || (x < y ? -1 : x > y ? 1 : 0);
};

/** The rows of every node (and this lake) joined: each lake's rows once (a node sharing a lake gives its buffer only), oldest first, the first `limit`. */
export async function otlpOverNodes(
  lake: Lake | undefined,
  over: OverNodes,
  call: { sessions: readonly string[]; window: { from_ms: number; to_ms: number } },
  limit: number,
  opts: { timeoutMs: number; maxResultBytes: number },
): Promise<{
  items: OtlpRelatedItemT[];
  total: number;
  gathered: Gathered<{ items: OtlpRelatedItemT[]; total: number }>;
}> {
  const g = await over.gather<{ items: OtlpRelatedItemT[]; total: number }>({
    read: "otlp",
    path: "/api/v1/transactions/otlp",
    window: { fromMs: call.window.from_ms, toMs: call.window.to_ms },
    body: (bufferOnly) => ({
      sessions: call.sessions,
      window: call.window,
      limit,
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
    ...(lake ? { local: () => otlpRelated(lake, call, limit, opts) } : {}),
    rows: (v) => v.items.length,
  });
  const all = g.answers.flatMap((a) => a.value.items).sort(byTime);
  return { items: all.slice(0, limit), total: g.answers.reduce((n, a) => n + a.value.total, 0), gathered: g };
}

const SOURCES = [
  {
    kind: "span",
    key: "main.otlp_traces",
    attrs: "span_attrs",
    text: "name",
    select: `duration_ns, status_code, NULL AS severity_number, NULL AS severity_text`,
  },
  {
    kind: "log",
    key: "main.otlp_logs",
    attrs: "attributes",
    text: "body",
    select: `NULL AS duration_ns, NULL AS status_code, severity_number, severity_text`,
  },
] as const;

export async function otlpRelated(
  lake: Lake,
  call: { sessions: readonly string[]; window: { from_ms: number; to_ms: number } },
  limit: number,
  opts: { timeoutMs: number; maxResultBytes: number; bufferOnly?: boolean },
): Promise<{ items: OtlpRelatedItemT[]; total: number }> {
  const all: OtlpRelatedItemT[] = [];
  const ids = call.sessions;
  if (ids.length === 0) return { items: [], total: 0 };
  const fromUs = call.window.from_ms * 1000;
  const toUs = call.window.to_ms * 1000;
  const idPh = ids.map((_x, i) => `$${i + 3}`).join(", ");
  for (const s of SOURCES) {
    if (!lake.table(s.key)) continue;
    const callId = `coalesce(${SIP_CALL_ID_ATTRIBUTES.map((a) => `json_extract_string(${s.attrs}, '$."${a}"')`).join(", ")})`;
    const r = await lake.query(
      `SELECT * FROM (SELECT epoch_us("timestamp") AS ts, ${callId} AS sip_call_id, service_name, ${s.text} AS text, trace_id, span_id, ${s.select}, ${s.attrs} AS attrs ` +
        `FROM (${await lake.scanSql(s.key, { fromUs, toUs, ...(opts.bufferOnly ? { files: false as const, buffer: true } : {}) })}) t WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT)) WHERE sip_call_id IN (${idPh}) ORDER BY ts LIMIT ${limit + 1}`,
      [fromUs, toUs, ...ids],
      {
        timeoutMs: opts.timeoutMs,
        maxResultBytes: opts.maxResultBytes,
        narrowHint: "narrow the time range of the call",
      },
    );
    for (const x of r.rows) {
      let attributes: Record<string, unknown> = {};
      try {
        attributes = JSON.parse(String(x.attrs)) as Record<string, unknown>;
      } catch {
        // stored by this receiver as JSON; an unreadable value shows as no attributes
      }
      const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
      all.push({
        kind: s.kind,
        timestamp: isoUs(Number(x.ts)),
        timestamp_us: Number(x.ts),
        sip_call_id: String(x.sip_call_id),
        service_name: (x.service_name as string | null) ?? null,
        text: (x.text as string | null) ?? null,
        trace_id: (x.trace_id as string | null) ?? null,
        span_id: (x.span_id as string | null) ?? null,
        duration_ns: n(x.duration_ns),
        status_code: n(x.status_code),
        severity_number: n(x.severity_number),
        severity_text: (x.severity_text as string | null) ?? null,
        attributes,
      });
    }
  }
  all.sort(byTime);
  return { items: all.slice(0, limit), total: all.length };
}
