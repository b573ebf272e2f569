/**
 * QoS tab: `POST /transactions/qos` as one summary per stream (SSRC in hex, jitter in ms, loss in
 * %, MOS) and three charts, jitter, packet loss and MOS over time, with one line per stream and a
 * legend naming it (docs/ADMIN.md, "QoS").
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { QOS_UNITS, formatMetric, lossPercent, mosGrade, ssrcHex } from "../lib/qos-format.ts";
import { LineChart, type Series } from "./line-chart.ts";
import { protocol, protoLabel } from "../../../src/core/protocols.ts";

// The response shape is the server's own type (type-only: nothing of src/ is bundled).
type QosPoint = import("../../../src/api/search/qos.ts").QosPoint;
type QosStream = import("../../../src/api/search/media-source.ts").QosStreamWithSource;

/** A report's source: RTCP, or an RTP agent (34, and 35 with media figures: docs/API.md "Protocol types"). */
const sourceOf = (proto: number) =>
  protocol(proto)?.media === "rtcp" ? "RTCP" : protocol(proto)?.media === "agent" ? "RTP agent" : protoLabel(proto);

/** Reports marked `"synthetic": true` (e.g. svc's loadgen, docs/LOADGEN.md "Media and RTCP reports"). */
/** Reports a PCAP import computed from the capture's RTP (docs/CALL-VIEW.md "Computed from RTP"). */
const RTP_NOTE =
  "computed by svc from the RTP packets of the imported capture (loss and jitter per RFC 3550, MOS by the E-model)";
const SYNTHETIC_NOTE =
  "synthetic report from a load generator: no RTP was measured; the figures are those of a lossless stream of the negotiated codec";

const streamName = (s: QosStream) => `${s.src_ip}:${s.src_port} → ${s.dst_ip}:${s.dst_port}`;
const legendOf = (s: QosStream) => (s.ssrc ? `${ssrcHex(s.ssrc)} ${streamName(s)}` : streamName(s));

function clockNote(s: QosStream): string {
  if (s.clock_rate === null) return "jitter as reported by the agent (ms)";
  const khz = `${s.clock_rate / 1000} kHz`;
  return s.clock_rate_assumed
    ? `jitter converted at ${khz} (assumed: the SDP names no codec for this stream)`
    : `jitter converted at the SDP codec's ${khz} clock`;
}

export function QosTab({ request }: { request: Record<string, unknown> }) {
  const [streams, setStreams] = useState<QosStream[] | null>(null);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    post<{ data: { streams: QosStream[] } }>("/transactions/qos", request).then(
      (r) => setStreams(r.data.streams),
      (e) => setError(errorText(e)),
    );
  }, []);
  if (error) return html`<p class="alert alert-error" role="alert">QoS could not be loaded: ${error}</p>`;
  if (!streams) return html`<p class="loading" role="status">Loading QoS reports…</p>`;
  if (streams.length === 0)
    return html`<div class="empty"><p>No RTCP or media-agent reports belong to this call (by correlation id or by the SDP media addresses) in its time window.</p></div>`;
  const series = (k: keyof QosPoint, f: (v: number) => number = (v) => v): Series[] =>
    streams.map((s) => ({
      label: legendOf(s),
      points: s.points.filter((p) => typeof p[k] === "number").map((p) => ({ t: p.ts_ms, v: f(p[k] as number) })),
    }));
  return html`<div class="qos">
    ${streams.map((s) => {
      const mos = s.summary.avg_mos;
      return html`<section key=${s.key} class="stream" aria-label=${`Stream ${s.src_ip}:${s.src_port} to ${s.dst_ip}:${s.dst_port}`}>
        <header class="stream-head">
          <span class="tag">${sourceOf(s.proto)}</span>
          <span class="mono">${streamName(s)}</span>
          ${s.ssrc && html`<span class="muted mono" title=${`SSRC ${s.ssrc} (decimal)`}>SSRC ${ssrcHex(s.ssrc)}</span>`}
          ${s.synthetic && html`<span class="tag tag-off">synthetic</span>`}
          ${s.computed_from_rtp && html`<span class="tag">computed from RTP</span>`}
        </header>
        <dl class="stats">
          <div><dt>Reports</dt><dd>${s.summary.reports}</dd></div>
          <div><dt>Max jitter</dt><dd>${formatMetric(s.summary.max_jitter_ms, QOS_UNITS.jitter)}</dd></div>
          <div><dt>Max loss</dt><dd>${formatMetric(s.summary.max_fraction_lost === null ? null : lossPercent(s.summary.max_fraction_lost), QOS_UNITS.loss)}</dd></div>
          <div><dt>Packets lost</dt><dd>${s.summary.total_lost ?? "—"}</dd></div>
          <div><dt>MOS avg / min</dt><dd class=${`mos ${mosGrade(mos)}`}>${formatMetric(mos, QOS_UNITS.mos)} / ${formatMetric(s.summary.min_mos, QOS_UNITS.mos)}</dd></div>
        </dl>
        <p class="muted small qos-note">${s.synthetic ? SYNTHETIC_NOTE : s.computed_from_rtp ? RTP_NOTE : clockNote(s)}</p>
      </section>`;
    })}
    <div class="qcharts">
      <${LineChart} title="Jitter" unit=${QOS_UNITS.jitter} series=${series("jitter_ms")} />
      <${LineChart} title="Packet loss" unit=${QOS_UNITS.loss} series=${series("fraction_lost", lossPercent)} />
      <${LineChart} title="MOS" unit=${QOS_UNITS.mos} series=${series("mos")} min=${1} max=${5} />
    </div>
  </div>`;
}
