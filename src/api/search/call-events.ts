import type { Lake } from "../../lake/index.ts";
import { callMedia, callMediaJson, callMediaSql, reportOfCallSql, type CallMedia } from "./call-media.ts";
import { qosPoint, type MediaEndpoint, type QosPoint } from "./qos.ts";
import { rtcpClockRate, rtcpReportJson } from "./rtcp-report.ts";
import type { CallEventQosSchema, CallEventSchema } from "./model.ts";
import type { SearchService } from "./service.ts";
import type { OverNodes } from "./fan-out.ts";
import type { NodeAcc } from "./transaction.ts";
import type { TableDef } from "../../core/index.ts";
import { hepTableKey } from "../../core/protocols.ts";

/**
 * Rows of other HEP protocols that belong to a call (docs/CALL-VIEW.md "RTCP and log events"):
 * RTCP reports (HEP 5) and agent media reports (34/35) by the rule of call-media.ts (docs/CALL-VIEW.md
 * "Which reports belong to a call"), logs (HEP 100) by correlation id only. Shared by
 * `POST /transactions/qos` (series per stream) and `POST /transactions/events` (the ladder's timeline markers).
 */
export interface CallScope {
  /** The call's Call-IDs (with correlated legs). */
  sessions: readonly string[];
  window: { from_ms: number; to_ms: number };
  /** Each Call-ID's media span and negotiated address pairs (callMedia). */
  media: readonly CallMedia[];
}

export interface ReportQueryOptions {
  timeoutMs: number;
  maxResultBytes: number;
}

/** What a report question reads: the QoS reader's columns, or every column (timestamps in µs). */
export type ReportSelect = "qos" | "all";

/** Rows of a report table that belong to a call, oldest first (then uuid), with the table's definition. */
export type ReportRowsReader = (
  key: string,
  scope: CallScope,
  select: ReportSelect,
  byAddress: boolean,
) => Promise<{ rows: Record<string, unknown>[]; def?: TableDef }>;

function selectList(def: TableDef, select: ReportSelect): string {
  if (select === "qos")
    return `epoch_ms("timestamp") AS ts_ms, uuid, src_ip, src_port, dst_ip, dst_port, payload, json_extract_string(data_extra, '$.payload_encoding') AS payload_encoding`;
  return def.columns
    .map((c) => (c.type === "timestamp" ? `epoch_us("${c.name}") AS "${c.name}"` : `"${c.name}"`))
    .join(", ");
}

/**
 * The rows of `key` in the call's window that belong to the call, oldest first; none when the
 * table does not exist. `byAddress` false: by correlation id only (logs). `bufferOnly`: a node's
 * answer when another node of its lake reads the files (docs/ARCHITECTURE.md "Reads over several nodes").
 */
export async function callReportRows(
  lake: Lake,
  key: string,
  scope: CallScope,
  select: ReportSelect,
  opts: ReportQueryOptions,
  byAddress = true,
  bufferOnly = false,
) {
  const def = lake.table(key);
  if (!def || scope.sessions.length === 0) return { rows: [] as Record<string, unknown>[] };
  const fromUs = scope.window.from_ms * 1000;
  const toUs = scope.window.to_ms * 1000;
  const media = byAddress ? scope.media : scope.media.map((c) => ({ ...c, pairs: [] }));
  const r = await lake.query(
    `SELECT ${selectList(def, select)} FROM (${await lake.scanSql(key, { fromUs, toUs, ...(bufferOnly ? { files: false as const, buffer: true } : {}) })}) r ` +
      `WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND EXISTS (SELECT 1 FROM ${callMediaSql("$3")} m WHERE ${reportOfCallSql("r", "m")}) ORDER BY "timestamp", uuid`,
    [fromUs, toUs, callMediaJson(media)],
    { timeoutMs: opts.timeoutMs, maxResultBytes: opts.maxResultBytes, narrowHint: "narrow the time range of the call" },
  );
  return { rows: r.rows, def };
}

/**
 * The report rows of a call from this lake, or over coordinator.nodes from every node: the
 * answers joined, a row given by two nodes of one lake once (uuid), in time order then uuid
 * (docs/ARCHITECTURE.md "Reads over several nodes"). `acc` collects what each node did.
 */
export function reportRowsReader(
  lake: Lake | undefined,
  opts: ReportQueryOptions,
  over?: OverNodes,
  acc?: NodeAcc,
): ReportRowsReader {
  const local = async (key: string, scope: CallScope, select: ReportSelect, byAddress: boolean) =>
    lake ? callReportRows(lake, key, scope, select, opts, byAddress) : { rows: [] };
  if (!over) return local;
  return async (key, scope, select, byAddress) => {
    if (scope.sessions.length === 0) return { rows: [] };
    const g = await over.gather<{ rows: Record<string, unknown>[]; def?: TableDef }>({
      read: "call-reports",
      path: "/api/v1/transactions/reports",
      window: { fromMs: scope.window.from_ms, toMs: scope.window.to_ms },
      body: (bufferOnly) => ({
        key,
        scope,
        select,
        by_address: byAddress,
        ...(bufferOnly ? { buffer_only: true } : {}),
      }),
      ...(lake ? { local: () => local(key, scope, select, byAddress) } : {}),
      rows: (v) => v.rows.length,
    });
    acc?.add(g);
    const seen = new Set<string>();
    const rows = g.answers
      .flatMap((a) => a.value.rows)
      .filter((r) => {
        const u = String(r.uuid ?? "");
        if (!u) return true;
        if (seen.has(u)) return false;
        seen.add(u);
        return true;
      });
    const time = (r: Record<string, unknown>) => Number(select === "qos" ? r.ts_ms : r.timestamp);
    rows.sort((a, b) => time(a) - time(b) || String(a.uuid).localeCompare(String(b.uuid)));
    return {
      rows,
      ...(g.answers.find((a) => a.value.def)?.value.def ? { def: g.answers.find((a) => a.value.def)!.value.def! } : {}),
    };
  };
}

/** The scope of a call view's rows (`TransactionService.messages`): its Call-IDs, window, and each Call-ID's media from its SIP messages. */
export function callScope(call: {
  sessions: readonly string[];
  window: { from_ms: number; to_ms: number };
  items: ReadonlyArray<Record<string, unknown>>;
}): CallScope {
  const messages = call.items.map((m) => ({
    session_id: String(m.session_id ?? ""),
    timestamp_us: Number(m.timestamp_us),
    payload: String(m.payload ?? ""),
  }));
  return {
    sessions: call.sessions,
    window: call.window,
    media: callMedia(messages, call.sessions, call.window.to_ms * 1000),
  };
}

/** rtcp: HEP 5; media: an agent's media report (HEP 34/35); log: HEP 100. */
export type CallEventKind = "rtcp" | "media" | "log";

/** RTCP numbers of one report; fraction_lost as sent (fixed point /256, RFC 3550 §6.4.1). */
export type CallEventQos = typeof CallEventQosSchema.static;

/** A message item (the columns of `POST /transactions/messages`) with what the timeline shows. */
export type CallEventItem = typeof CallEventSchema.static & Record<string, unknown>;

/** Longest summary; the whole payload stays in `payload`. */
export const SUMMARY_MAX = 300;

const RTCP_TYPES: Record<number, string> = { 200: "SR", 201: "RR", 202: "SDES", 203: "BYE", 204: "APP", 207: "XR" };

function clip(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > SUMMARY_MAX ? `${one.slice(0, SUMMARY_MAX - 1)}…` : one;
}

/** The numbers of a report as qos.ts's reader found them (null where the report has none). */
function eventQos(q: QosPoint): CallEventQos {
  return {
    jitter: q.jitter ?? null,
    fraction_lost: q.fraction_lost ?? null,
    loss_pct: q.fraction_lost === undefined ? null : Math.round((q.fraction_lost * 1000) / 256) / 10,
    packets_lost: q.packets_lost ?? null,
    mos: q.mos ?? null,
  };
}

/** RTCP: `RTCP SR · jitter 12 · loss 2.0 % · 4 lost · MOS 4.10` from the report's JSON (heplify, rtpengine). */
export function rtcpEvent(
  payload: string,
  encoding: unknown,
  arrivalMs = 0,
  clockRate = 8000,
): { summary: string; qos: CallEventQos | null } {
  // Binary RTCP is decoded into the JSON form first (docs/CALL-VIEW.md "Binary RTCP").
  const r = rtcpReportJson(payload, encoding, arrivalMs, clockRate);
  const p = r.ok ? qosPoint(JSON.stringify(r.json), 0) : undefined;
  if (!p)
    return {
      summary:
        encoding === "base64"
          ? `RTCP report (binary, not decoded: ${r.ok ? "no figures" : r.reason})`
          : "RTCP report (not JSON, not decoded)",
      qos: null,
    };
  const type = r.ok ? r.json.type : undefined;
  const qos = eventQos(p.point);
  const parts = [`RTCP${typeof type === "number" && RTCP_TYPES[type] ? ` ${RTCP_TYPES[type]}` : ""}`];
  if (qos.jitter !== null) parts.push(`jitter ${qos.jitter}`);
  if (qos.loss_pct !== null) parts.push(`loss ${qos.loss_pct.toFixed(1)} %`);
  if (qos.packets_lost !== null) parts.push(`${qos.packets_lost} lost`);
  if (qos.mos !== null) parts.push(`MOS ${qos.mos.toFixed(2)}`);
  return { summary: parts.join(" · "), qos };
}

/**
 * An agent's media report (HEP 34 "MOS full report", 35): `Media report · MOS 4.41 · 0 lost ·
 * jitter 0 ms` from the same reader as `POST /transactions/qos` (agents report jitter in ms); a
 * report marked `"synthetic": true` (a load generator's, no RTP measured) says so.
 */
export function mediaReportEvent(payload: string, encoding: unknown): { summary: string; qos: CallEventQos | null } {
  const p = encoding === "base64" ? undefined : qosPoint(payload, 0);
  if (!p) return { summary: "Media report (not JSON, not decoded)", qos: null };
  const qos = eventQos(p.point);
  // A PCAP import's report computed from the capture's RTP (docs/CALL-VIEW.md "Computed from RTP") says so.
  const fromRtp = !p.synthetic && /"source":"rtp"/.test(payload);
  const parts = [
    p.synthetic
      ? "Media report (synthetic, no RTP measured)"
      : fromRtp
        ? "Media report (computed from RTP)"
        : "Media report",
  ];
  if (qos.mos !== null) parts.push(`MOS ${qos.mos.toFixed(2)}`);
  if (qos.packets_lost !== null) parts.push(`${qos.packets_lost} lost`);
  if (qos.jitter !== null) parts.push(`jitter ${qos.jitter} ms`);
  return { summary: parts.join(" · "), qos };
}

/** A log line: its text, or the message member of a JSON log record. */
export function logSummary(payload: string, encoding: unknown): string {
  if (encoding === "base64") return `binary log payload (${Math.floor((payload.length * 3) / 4)} bytes)`;
  const text = payload.trim();
  if (text.startsWith("{")) {
    try {
      const o = JSON.parse(text) as Record<string, unknown>;
      for (const k of ["message", "msg", "text", "log", "body"])
        if (typeof o[k] === "string" && o[k] !== "") return clip(o[k] as string);
    } catch {
      // not JSON after all: the text as it is
    }
  }
  return clip(text) || "(empty log line)";
}

/** Timeline events of a call: RTCP reports, agent media reports and logs, oldest first, at most `limit`. */
/** `endpoints`: the call's SDP media addresses with their clock rates (qos.ts mediaEndpoints), for RTCP jitter in ms. */
export async function callEvents(
  read: ReportRowsReader,
  search: SearchService,
  scope: CallScope,
  endpoints: readonly MediaEndpoint[],
  limit: number,
): Promise<{ items: CallEventItem[]; total: number }> {
  // `reportsOnly`: HEP 35 is the agents' MOS short report, but docs/KPIS.md "RTCP and MOS" (and the
  // CLI's `dns` name) read it as DNS: a 35 row without a MOS, jitter or loss figure is not a media report.
  const sources: Array<{ proto: number; kind: CallEventKind; media: boolean; reportsOnly?: boolean }> = [
    { proto: 5, kind: "rtcp", media: true },
    { proto: 34, kind: "media", media: true },
    { proto: 35, kind: "media", media: true, reportsOnly: true },
    { proto: 100, kind: "log", media: false },
  ];
  const all: CallEventItem[] = [];
  for (const s of sources) {
    const key = hepTableKey(s.proto);
    const { rows, def } = await read(key, scope, "all", s.media);
    if (!def) continue;
    for (const r of rows) {
      const item = search.toItem(r, 0, def, key);
      const encoding = (item.data_extra as Record<string, unknown> | null)?.payload_encoding;
      const payload = String(r.payload ?? "");
      const ev =
        s.kind === "rtcp"
          ? rtcpEvent(
              payload,
              encoding,
              Number(r.timestamp) / 1000,
              rtcpClockRate(endpoints, {
                src_ip: String(r.src_ip),
                src_port: Number(r.src_port),
                dst_ip: String(r.dst_ip),
                dst_port: Number(r.dst_port),
              }),
            )
          : s.kind === "media"
            ? mediaReportEvent(payload, encoding)
            : { summary: logSummary(payload, encoding), qos: null };
      if (
        s.reportsOnly &&
        (ev.qos === null || (ev.qos.mos === null && ev.qos.jitter === null && ev.qos.packets_lost === null))
      )
        continue;
      all.push({ ...item, kind: s.kind, summary: ev.summary, qos: ev.qos } as CallEventItem);
    }
  }
  all.sort((a, b) => Number(a.timestamp_us) - Number(b.timestamp_us));
  const items = all.slice(0, limit);
  items.forEach((it, i) => (it.id = i + 1));
  return { items, total: all.length };
}
