import { type Static, t } from "elysia";
import { sipSdp, parseSip } from "../../sip/index.ts";

/**
 * QoS of a call (docs/ADMIN.md "QoS"): RTCP reports (HEP 5) and agent media
 * reports (HEP 34/35) that belong to the call (call-media.ts: by correlation id, or without one by
 * an address pair negotiated in the call's SDP inside its media span; docs/CALL-VIEW.md "Which
 * reports belong to a call") turned into per-stream time series.
 */
export const MediaEndpointSchema = t.Object({
  ip: t.String(),
  port: t.Integer(),
  clock_rate: t.Union([t.Integer(), t.Null()], {
    description: "RTP clock (Hz) of the m= line's first codec other than telephone-event, when the SDP names one",
  }),
});
export type MediaEndpoint = Static<typeof MediaEndpointSchema>;

/** RTP and RTCP endpoints offered in the call's SDP bodies (RTCP = rtcp attribute or port + 1). */
export function mediaEndpoints(payloads: readonly string[]): MediaEndpoint[] {
  const out = new Map<string, MediaEndpoint>();
  const enc = new TextEncoder();
  for (const p of payloads) {
    const bytes = enc.encode(p);
    const r = parseSip(bytes);
    if (!r.ok) continue;
    const sdp = sipSdp(bytes, r.value);
    for (const m of sdp?.media ?? []) {
      if (!m.address || !m.port) continue;
      const clock = m.codecs.find((c) => c.clockRate && !/^(telephone-event|cn|red)$/i.test(c.name))?.clockRate ?? null;
      for (const port of [m.port, m.rtcpPort ?? m.port + 1]) {
        const known = out.get(`${m.address}:${port}`);
        out.set(`${m.address}:${port}`, { ip: m.address, port, clock_rate: clock ?? known?.clock_rate ?? null });
      }
    }
  }
  return [...out.values()];
}

const optionalNumber = (description?: string) => t.Optional(t.Number(description ? { description } : {}));
const nullableNumber = () => t.Union([t.Number(), t.Null()]);

export const QosPointSchema = t.Object({
  ts_ms: t.Number(),
  jitter: optionalNumber(
    "as reported: RTCP interarrival jitter in RTP timestamp units (RFC 3550 §6.4.1), agents report ms",
  ),
  jitter_ms: optionalNumber("jitter in milliseconds: RTCP units ÷ (clock rate / 1000), agents' value as is"),
  fraction_lost: optionalNumber("fraction lost, fixed point /256"),
  packets_lost: optionalNumber(),
  mos: optionalNumber(),
  r_factor: optionalNumber(),
  delay: optionalNumber(),
});
export type QosPoint = Static<typeof QosPointSchema>;

export const QosStreamSchema = t.Object({
  key: t.String(),
  proto: t.Integer(),
  src_ip: t.String(),
  src_port: t.Integer(),
  dst_ip: t.String(),
  dst_port: t.Integer(),
  ssrc: t.Union([t.String(), t.Null()]),
  clock_rate: t.Union([t.Number(), t.Null()], {
    description:
      "RTP clock (Hz) that converted RTCP jitter to ms: the SDP's for the stream's address and port, else 8000 with clock_rate_assumed; null for agent reports (already ms)",
  }),
  clock_rate_assumed: t.Boolean(),
  synthetic: t.Boolean({
    description:
      'every report of the stream says "synthetic": true: made up by a load generator, no RTP measured (docs/ADMIN.md "QoS")',
  }),
  points: t.Array(QosPointSchema),
  summary: t.Object({
    reports: t.Integer(),
    max_jitter: nullableNumber(),
    max_jitter_ms: nullableNumber(),
    max_fraction_lost: nullableNumber(),
    total_lost: nullableNumber(),
    min_mos: nullableNumber(),
    avg_mos: nullableNumber(),
  }),
});
export type QosStream = Static<typeof QosStreamSchema>;

const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v)
    ? v
    : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;

/** Finds the first numeric value under any of `names` (case-insensitive, any depth up to 3). */
function pick(obj: unknown, names: readonly string[], depth = 0): number | undefined {
  if (!obj || typeof obj !== "object" || depth > 3) return undefined;
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    if (names.includes(k.toLowerCase())) {
      const n = num(v);
      if (n !== undefined) return n;
    }
  }
  for (const v of Object.values(obj as Record<string, unknown>)) {
    if (v && typeof v === "object") {
      const n = pick(Array.isArray(v) ? v[0] : v, names, depth + 1);
      if (n !== undefined) return n;
    }
  }
  return undefined;
}

/** One report row → a point. RTCP JSON (heplify/rtpengine: report_blocks[].ia_jitter, fraction_lost, packets_lost) or agent MOS reports. */
export function qosPoint(
  payload: string,
  tsMs: number,
): { point: QosPoint; ssrc: string | null; synthetic: boolean } | undefined {
  let j: unknown;
  try {
    j = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!j || typeof j !== "object") return undefined;
  const o = j as Record<string, unknown>;
  const block = Array.isArray(o.report_blocks)
    ? (o.report_blocks[0] as Record<string, unknown> | undefined)
    : undefined;
  const point: QosPoint = { ts_ms: tsMs };
  const jitter = num(block?.ia_jitter) ?? pick(o, ["jitter", "ia_jitter", "avg_jitter", "max_jitter"]);
  const fl = num(block?.fraction_lost) ?? pick(o, ["fraction_lost", "fractionlost"]);
  const pl = num(block?.packets_lost) ?? pick(o, ["packets_lost", "packetslost", "lost", "total_pk_lost"]);
  const mos = pick(o, ["mos", "mos_cq", "mos_lq", "mos_average"]);
  const rf = pick(o, ["r_factor", "rfactor", "r_val"]);
  const delay = pick(o, ["delay", "rtt", "round_trip_delay", "dlsr"]);
  if (jitter !== undefined) point.jitter = jitter;
  if (fl !== undefined) point.fraction_lost = fl;
  if (pl !== undefined) point.packets_lost = pl;
  if (mos !== undefined) point.mos = mos > 5 ? mos / 100 : mos; // HEP agents send MOS × 100
  if (rf !== undefined) point.r_factor = rf > 100 ? rf / 100 : rf;
  if (delay !== undefined) point.delay = delay;
  const ssrc = num(o.ssrc) ?? num(block?.source_ssrc);
  return { point, ssrc: ssrc === undefined ? null : String(ssrc), synthetic: o.synthetic === true };
}

/** Clock rate when the SDP does not name the stream's codec: G.711, G.729, G.722 (RFC 3551 §4.5.2) all tick at 8 kHz. */
export const ASSUMED_CLOCK_RATE = 8000;

export function buildStreams(
  rows: ReadonlyArray<{
    proto: number;
    ts_ms: number;
    src_ip: string;
    src_port: number;
    dst_ip: string;
    dst_port: number;
    payload: string;
  }>,
  media: readonly MediaEndpoint[] = [],
): QosStream[] {
  const clockOf = new Map(media.filter((m) => m.clock_rate !== null).map((m) => [`${m.ip}:${m.port}`, m.clock_rate!]));
  const streams = new Map<string, QosStream>();
  for (const r of rows) {
    const p = qosPoint(r.payload, r.ts_ms);
    if (!p) continue;
    const key = `${r.proto}|${r.src_ip}:${r.src_port}>${r.dst_ip}:${r.dst_port}|${p.ssrc ?? ""}`;
    let s = streams.get(key);
    if (!s) {
      const rtcp = r.proto === 5;
      const sdpClock = clockOf.get(`${r.src_ip}:${r.src_port}`) ?? clockOf.get(`${r.dst_ip}:${r.dst_port}`);
      s = {
        key,
        proto: r.proto,
        src_ip: r.src_ip,
        src_port: r.src_port,
        dst_ip: r.dst_ip,
        dst_port: r.dst_port,
        ssrc: p.ssrc,
        clock_rate: rtcp ? (sdpClock ?? ASSUMED_CLOCK_RATE) : null,
        clock_rate_assumed: rtcp && sdpClock === undefined,
        synthetic: p.synthetic,
        points: [],
        summary: {
          reports: 0,
          max_jitter: null,
          max_jitter_ms: null,
          max_fraction_lost: null,
          total_lost: null,
          min_mos: null,
          avg_mos: null,
        },
      };
      streams.set(key, s);
    }
    if (p.point.jitter !== undefined)
      p.point.jitter_ms =
        s.clock_rate === null ? p.point.jitter : Math.round((p.point.jitter * 1e6) / s.clock_rate) / 1000;
    s.synthetic &&= p.synthetic;
    s.points.push(p.point);
  }
  for (const s of streams.values()) {
    s.points.sort((a, b) => a.ts_ms - b.ts_ms);
    const vals = (k: keyof QosPoint) => s.points.map((p) => p[k]).filter((v): v is number => typeof v === "number");
    const max = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
    const mos = vals("mos");
    s.summary = {
      reports: s.points.length,
      max_jitter: max(vals("jitter")),
      max_jitter_ms: max(vals("jitter_ms")),
      max_fraction_lost: max(vals("fraction_lost")),
      total_lost: max(vals("packets_lost")),
      min_mos: mos.length ? Math.min(...mos) : null,
      avg_mos: mos.length ? Math.round((mos.reduce((a, b) => a + b, 0) / mos.length) * 100) / 100 : null,
    };
  }
  return [...streams.values()];
}
