/**
 * Import PCAP (`POST /imports/pcap`, docs/ARCHITECTURE.md "PCAP import"): a pcap or pcapng file is
 * uploaded with progress, the appliance extracts its SIP messages and stores them like captured
 * HEP, and answers once they are searchable. The report's counts are shown as they come; a refused
 * file shows the API's own message (not a pcap, no SIP in it, too many records, too large).
 */
import { useRef, useState } from "preact/hooks";
import { ApiError, errorText } from "../lib/api.ts";
import { formatBytes, formatTime } from "../lib/format.ts";
import { html } from "../lib/html.ts";
import { timeRange } from "../lib/state.ts";
import { uploadForm, type UploadProgress } from "../lib/upload.ts";
import { Page } from "./common.ts";

/** The 201 body's `data` (src/api/imports/schema.ts ImportReport; type-only, nothing of src/ is bundled). */
type ImportReport = import("../../../src/api/imports/schema.ts").ImportReport;

type State =
  | { kind: "idle" }
  | { kind: "uploading"; progress: UploadProgress; abort: () => void }
  | { kind: "importing" }
  | { kind: "done"; report: ImportReport; message: string }
  | { kind: "error"; message: string };

const TABLES: Array<[string, string]> = [
  ["", "By method (automatic)"],
  ["call", "All in call"],
  ["registration", "All in registration"],
  ["default", "All in default"],
];

function failureText(e: unknown): string {
  if (e instanceof ApiError && e.status === 413 && !e.message.includes("max_")) {
    return "The capture is larger than this appliance accepts (coordinator.http_server.max_body_bytes): split it (editcap -c) or filter it to SIP first (tshark -Y sip -w)";
  }
  return errorText(e);
}

export function ImportPage() {
  const [file, setFile] = useState<File | null>(null);
  const [shift, setShift] = useState(false);
  const [table, setTable] = useState("");
  const [state, setState] = useState<State>({ kind: "idle" });
  const input = useRef<HTMLInputElement>(null);
  const busy = state.kind === "uploading" || state.kind === "importing";

  const submit = (e: Event) => {
    e.preventDefault();
    if (!file || busy) return;
    const form = new FormData();
    form.append("file", file, file.name);
    if (shift) form.append("override_to_current_time", "true");
    if (table) form.append("force_sip_table", table);
    const up = uploadForm<{ data: ImportReport; message: string }>(
      "/imports/pcap",
      form,
      (progress) => setState((s) => (s.kind === "uploading" ? { ...s, progress } : s)),
      () => setState({ kind: "importing" }),
    );
    setState({ kind: "uploading", progress: { loaded: 0, total: file.size }, abort: up.abort });
    up.done.then(
      (r) => setState({ kind: "done", report: r.data, message: r.message }),
      (err) => setState({ kind: "error", message: failureText(err) }),
    );
  };

  return html`<${Page}
    title="Import PCAP"
    intro="SIP messages of a capture file (pcap or pcapng; UDP, TCP, WebSocket, SCTP) are stored like captured HEP traffic and can be searched as soon as the import has finished."
  >
    <form class="card form-grid" onSubmit=${submit} aria-label="Import PCAP">
      <label class="span-all">Capture file (.pcap, .pcapng)
        <input ref=${input} type="file" accept=".pcap,.pcapng,.cap,application/vnd.tcpdump.pcap" disabled=${busy}
          onChange=${(e: Event) => {
            setFile((e.target as HTMLInputElement).files?.[0] ?? null);
            if (!busy) setState({ kind: "idle" });
          }} />
      </label>
      <label>Store SIP messages
        <select value=${table} disabled=${busy} aria-describedby="import-table-help" onChange=${(e: Event) => setTable((e.target as HTMLSelectElement).value)}>
          ${TABLES.map(([v, l]) => html`<option key=${v} value=${v}>${l}</option>`)}
        </select>
      </label>
      <p class="muted small span-all" id="import-table-help">By method (as for captured HEP): INVITE, ACK, BYE, CANCEL, PRACK, UPDATE, INFO go to the call table, REGISTER to registration, the others to default.</p>
      <label class="check span-all"><input type="checkbox" checked=${shift} disabled=${busy} onChange=${(e: Event) => setShift((e.target as HTMLInputElement).checked)} /> Shift times so the first message is now (an old capture would otherwise be removed by retention)</label>
      <div class="form-actions span-all">
        ${state.kind === "uploading" && html`<button type="button" class="btn btn-ghost" onClick=${state.abort}>Cancel upload</button>`}
        <button type="submit" class="btn btn-primary" disabled=${!file || busy}>${busy ? "Importing…" : "Import"}</button>
      </div>
    </form>
    <${ImportState} state=${state} />
  <//>`;
}

function ImportState({ state }: { state: State }) {
  if (state.kind === "idle") return null;
  if (state.kind === "error")
    return html`<p class="alert alert-error" role="alert">Import failed: ${state.message}</p>`;
  if (state.kind === "uploading") {
    const { loaded, total } = state.progress;
    const pct = total > 0 ? Math.min(100, Math.round((loaded * 100) / total)) : 0;
    return html`<div class="card" role="status">
      <p>Uploading… ${formatBytes(loaded)}${total > 0 ? ` of ${formatBytes(total)}` : ""}</p>
      <progress max="100" value=${pct} aria-label="Upload progress">${pct} %</progress>
    </div>`;
  }
  if (state.kind === "importing")
    return html`<div class="card" role="status"><p>Uploaded. Extracting and storing the SIP messages…</p><progress aria-label="Import progress"></progress></div>`;
  const r = state.report;
  const counts = (o: Record<string, number | undefined>) =>
    Object.entries(o)
      .filter(([, n]) => n)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "—";
  const row = (k: string, v: unknown) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`;
  const open = () => {
    if (r.first_timestamp_us === null || r.last_timestamp_us === null) return;
    timeRange.set({
      kind: "absolute",
      from: Math.floor(r.first_timestamp_us / 1000) - 1000,
      to: Math.ceil(r.last_timestamp_us / 1000) + 1000,
    });
    location.hash = "#/";
  };
  return html`<section class="card" aria-label="Import result">
    <p class=${`status ${r.imported === r.sip_messages ? "status-ok" : "status-progress"}`} role="status"><strong>${state.message}</strong></p>
    <dl class="info-grid">
      ${row("File", html`<span class="mono">${r.file.name}</span> (${r.file.format}, ${formatBytes(r.file.bytes)}, ${r.file.frames} frames)`)}
      ${row("SIP messages found", r.sip_messages)}
      ${row("Imported", r.imported)}
      ${row("Per table", html`<span class="mono">${counts(r.tables)}</span>`)}
      ${row("Per transport", html`<span class="mono">${counts(r.transports)}</span>`)}
      ${row("Skipped", html`<span class="mono">${counts(r.skipped)}</span>`)}
      ${row("First message", r.first_timestamp_us === null ? "—" : html`<span class="mono">${formatTime(r.first_timestamp_us / 1000)}</span>`)}
      ${row("Last message", r.last_timestamp_us === null ? "—" : html`<span class="mono">${formatTime(r.last_timestamp_us / 1000)}</span>`)}
      ${r.media.rtcp_reports + r.media.rtp_streams > 0 && row("Media of the calls", `${r.media.rtcp_reports} RTCP reports, ${r.media.rtp_streams} RTP streams (${r.media.rtp_packets} packets) measured`)}
      ${r.time_shift_us !== 0 && row("Times", r.time_shift ?? `shifted ${(r.time_shift_us / 1e6).toFixed(1)} s to now`)}
    </dl>
    ${r.warnings.map((w) => html`<p key=${w} class="alert alert-warn">${w}</p>`)}
    ${r.imported > 0 && html`<div class="form-actions"><button type="button" class="btn btn-primary" onClick=${open}>Show these times in the dashboard</button></div>`}
  </section>`;
}
