/** QoS tab: `POST /transactions/qos` streams as summary cards with jitter, loss and MOS charts. */
import { useEffect, useState } from "preact/hooks";
import { errorText, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { LineChart } from "./line-chart.ts";

// The response shape is the server's own type (type-only: nothing of src/ is bundled).
type QosPoint = import("../../../src/api/search/qos.ts").QosPoint;
type QosStream = import("../../../src/api/search/qos.ts").QosStream;

const PROTO: Record<number, string> = { 5: "RTCP", 34: "RTP agent", 35: "RTP agent" };
/** RTCP fraction lost is a fixed-point fraction of 256 (RFC 3550 §6.4.1). */
const lossPct = (fl: number) => (fl * 100) / 256;
const n = (v: number | null, digits = 1) => (v === null ? "—" : v.toFixed(digits));

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
  return html`<div class="qos">
    ${streams.map((s) => {
      const pts = (k: keyof QosPoint, f: (v: number) => number = (v) => v) =>
        s.points.filter((p) => typeof p[k] === "number").map((p) => ({ t: p.ts_ms, v: f(p[k] as number) }));
      const mos = s.summary.avg_mos;
      const grade = mos === null ? "" : mos >= 4 ? "good" : mos >= 3.6 ? "fair" : "poor";
      return html`<section key=${s.key} class="stream" aria-label=${`Stream ${s.src_ip}:${s.src_port} to ${s.dst_ip}:${s.dst_port}`}>
        <header class="stream-head">
          <span class="tag">${PROTO[s.proto] ?? `HEP ${s.proto}`}</span>
          <span class="mono">${s.src_ip}:${s.src_port} → ${s.dst_ip}:${s.dst_port}</span>
          ${s.ssrc && html`<span class="muted mono">SSRC ${s.ssrc}</span>`}
        </header>
        <dl class="stats">
          <div><dt>Reports</dt><dd>${s.summary.reports}</dd></div>
          <div><dt>Max jitter</dt><dd>${n(s.summary.max_jitter)}</dd></div>
          <div><dt>Max loss</dt><dd>${s.summary.max_fraction_lost === null ? "—" : `${lossPct(s.summary.max_fraction_lost).toFixed(1)} %`}</dd></div>
          <div><dt>Packets lost</dt><dd>${s.summary.total_lost ?? "—"}</dd></div>
          <div><dt>MOS avg / min</dt><dd class=${`mos ${grade}`}>${n(mos, 2)} / ${n(s.summary.min_mos, 2)}</dd></div>
        </dl>
        <div class="qcharts">
          <${LineChart} title="Jitter" unit="" points=${pts("jitter")} cls="c-jitter" />
          <${LineChart} title="Loss" unit="%" points=${pts("fraction_lost", lossPct)} cls="c-loss" />
          <${LineChart} title="MOS" unit="" points=${pts("mos")} min=${1} max=${5} cls="c-mos" />
        </div>
      </section>`;
    })}
  </div>`;
}
