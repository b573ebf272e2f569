/**
 * Call KPI table (docs/KPIS.md) over the widget's time range and node, three views (saved in the
 * widget config `view`): the KPIs of the range (`GET /statistics/kpi` totals: ASR, NER, ACD,
 * PDD, outcomes, registrations, RTCP, MOS), the response-code mix, and the top failing
 * destinations (`GET /statistics/kpi/destinations`, at most 20 here).
 */
import { useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import { kpiText, useKpiFetch, type FailingDestination, type KpiData, type KpiFigures, type Kind } from "../lib/kpi.ts";
import { KpiControls } from "./kpi-controls.ts";
import type { WidgetProps } from "./types.ts";

export const KPI_TABLE_TITLE = "Call KPI table";
const VIEWS = [
  { value: "summary", label: "KPIs" },
  { value: "codes", label: "Response codes" },
  { value: "destinations", label: "Failing destinations" },
] as const;
type View = (typeof VIEWS)[number]["value"];
const DESTINATIONS = 20;

const OUTCOME_LABELS: ReadonlyArray<[keyof KpiFigures["outcomes"], string]> = [
  ["answered", "Answered"],
  ["busy", "Busy (486, 600)"],
  ["no_answer", "No answer (480)"],
  ["rejected", "Declined (603, 607, 608)"],
  ["cancelled", "Cancelled (CANCEL, 487)"],
  ["redirected", "Redirected (3xx)"],
  ["failed", "Failed (other 4xx-6xx)"],
  ["no_response", "No final response"],
  ["pending", "Still in progress"],
];

/** Rows of the KPI view: label, value, what it means. */
function summaryRows(t: KpiFigures): Array<[string, string, string]> {
  const row = (label: string, v: number | null, kind: Kind, help: string): [string, string, string] => [
    label,
    kpiText(v, kind),
    help,
  ];
  return [
    row("Call attempts", t.attempts, "count", "calls whose initial INVITE falls in the range"),
    row("ASR", t.asr, "ratio", "answered / completed attempts"),
    row("NER", t.ner, "ratio", "answered, busy, no answer, declined or cancelled / completed attempts (ITU-T E.425)"),
    row("ACD", t.acd_s, "s", "average duration of answered calls (2xx to BYE)"),
    row("PDD", t.pdd_ms, "ms", "INVITE to first 18x or 2xx (RFC 6076)"),
    row("Setup time", t.setup_ms, "ms", "INVITE to first 2xx of answered calls"),
    ...OUTCOME_LABELS.map(([k, label]) => row(label, t.outcomes[k] ?? 0, "count", "calls with this outcome")),
    row("Registrations OK", t.registrations.success ?? 0, "count", "REGISTER transactions answered 2xx"),
    row(
      "Registrations failed",
      (t.registrations.failed ?? 0) + (t.registrations.no_response ?? 0),
      "count",
      "REGISTER transactions answered 3xx-6xx (not 401/407) or unanswered",
    ),
    row("Registration success", t.registration_success_ratio, "ratio", "successful / REGISTERs (challenges left out)"),
    row("RTCP reports", t.rtcp_reports, "count", "RTCP reports with a report block"),
    [
      "Jitter (mean / max)",
      `${kpiText(t.jitter_ms_avg, "ms")} / ${kpiText(t.jitter_ms_max, "ms")}`,
      "RTCP interarrival jitter at 8 kHz",
    ],
    [
      "Loss (mean / max)",
      `${kpiText(t.loss_pct_avg, "pct")} / ${kpiText(t.loss_pct_max, "pct")}`,
      "RTCP fraction lost",
    ],
    ["MOS (mean / min)", `${kpiText(t.mos_avg, "mos")} / ${kpiText(t.mos_min, "mos")}`, "agent media reports"],
  ];
}

/** A table of text cells; the first cell of a row is its header (with `titles[i]` as its tooltip). */
function Table({ name, head, rows, titles }: { name: string; head: string[]; rows: string[][]; titles?: string[] }) {
  return html`<div class="kpi-table-wrap"><table class="kpi-table" aria-label=${name}>
    <thead><tr>${head.map((h, i) => html`<th key=${h} scope="col" class=${i > 0 ? "num" : ""}>${h}</th>`)}</tr></thead>
    <tbody>${rows.map((r, n) => html`<tr key=${r[0]}>${r.map((c, i) => (i === 0 ? html`<th scope="row" key=${i} title=${titles?.[n] ?? ""}>${c}</th>` : html`<td key=${i} class="num">${c}</td>`))}</tr>`)}</tbody>
  </table></div>`;
}

export function KpiTable({ widget, onUpdate }: WidgetProps) {
  const title = typeof widget.config?.title === "string" && widget.config.title ? widget.config.title : KPI_TABLE_TITLE;
  const view: View = VIEWS.find((v) => v.value === widget.config?.view)?.value ?? "summary";
  const [seq, setSeq] = useState(0);
  const dest = view === "destinations";
  const loaded = useKpiFetch<KpiData & { items?: FailingDestination[] }>(
    widget.config,
    dest ? "/statistics/kpi/destinations" : "/statistics/kpi",
    dest ? { limit: String(DESTINATIONS) } : { step: "1d" },
    seq,
  );
  const d = loaded.status === "loading" && !loaded.data ? undefined : loaded.data;

  const status =
    loaded.status === "loading"
      ? "Computing KPIs…"
      : d?.totals && !dest
        ? `${kpiText(d.totals.attempts, "count")} call attempts`
        : "";
  const controls = html`<${KpiControls} widget=${widget} title=${title} onUpdate=${onUpdate} onRefresh=${() => setSeq((s) => s + 1)} status=${status}>
    <label class="small">Show <select value=${view} aria-label=${`View of ${title}`} onChange=${(e: Event) => onUpdate({ ...widget, config: { ...widget.config, view: (e.target as HTMLSelectElement).value } })}>
      ${VIEWS.map((v) => html`<option key=${v.value} value=${v.value}>${v.label}</option>`)}
    </select></label>
  </${KpiControls}>`;

  let body: unknown;
  if (loaded.status === "error")
    body = html`<p class="alert alert-error" role="alert">KPIs could not be computed: ${loaded.error}</p>`;
  else if (!d || (dest ? !d.items : !d.totals))
    body = html`<div class="empty"><p>Computing KPIs over the time range…</p></div>`;
  else if (view === "summary")
    body = html`<${Table} name="Call KPIs" head=${["KPI", "Value"]} rows=${summaryRows(d.totals).map(([l, v]) => [l, v])} titles=${summaryRows(d.totals).map((r) => r[2])} />`;
  else if (view === "codes") {
    const total = d.response_codes.reduce((s, c) => s + c.calls, 0);
    body =
      total === 0
        ? html`<div class="empty"><p>No completed calls in the range.</p></div>`
        : html`<${Table} name="Response codes" head=${["Final response", "Calls", "Share"]} rows=${d.response_codes.map((c) => [c.code === null ? "none" : String(c.code), kpiText(c.calls, "count"), kpiText(c.calls / total, "ratio")])} />`;
  } else {
    const items = d.items ?? [];
    body =
      items.length === 0
        ? html`<div class="empty"><p>No failed calls in the range.</p></div>`
        : html`<${Table} name="Failing destinations" head=${["Destination", "Attempts", "Failures", "Failed", "Top code"]}
          rows=${items.map((x) => [x.destination || "(none)", kpiText(x.attempts, "count"), kpiText(x.failures, "count"), kpiText(x.failure_ratio, "ratio"), x.top_code === null ? "no response" : String(x.top_code)])} />
        ${items.length === DESTINATIONS ? html`<p class="muted small" role="note">The ${DESTINATIONS} destinations with the most failures; more may have failed.</p>` : null}`;
  }
  return html`<div class="chart kpi-panel" aria-busy=${loaded.status === "loading" ? "true" : "false"}>${controls}${body}</div>`;
}
