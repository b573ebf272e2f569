/**
 * OpenTelemetry tab of the call view: `POST /transactions/otlp`, the spans and log records whose
 * attributes carry one of the call's Call-IDs, oldest first (docs/OTLP.md "Linking to calls").
 * Selecting a row shows its attributes.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { formatTime } from "../lib/format.ts";

// The response shape is the server's own type (type-only: nothing of src/ is bundled).
type OtlpItem = import("../../../src/api/search/otlp-related.ts").OtlpRelatedItemT;

const STATUS = ["unset", "ok", "error"];

function duration(ns: number | null): string {
  if (ns === null) return "";
  if (ns < 1_000_000) return `${(ns / 1000).toFixed(0)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(1)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

const level = (i: OtlpItem) =>
  i.kind === "span"
    ? `${STATUS[i.status_code ?? 0] ?? i.status_code}${i.duration_ns !== null ? ` · ${duration(i.duration_ns)}` : ""}`
    : (i.severity_text ?? (i.severity_number ? `severity ${i.severity_number}` : ""));

export function OtlpTab({ request }: { request: Record<string, unknown> }) {
  const [items, setItems] = useState<OtlpItem[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string | undefined>();
  const [open, setOpen] = useState<number | undefined>();
  useEffect(() => {
    post<{ data: { items: OtlpItem[] }; meta: { pagination: { total: number } } }>("/transactions/otlp", request).then(
      (r) => {
        setItems(r.data.items);
        setTotal(r.meta.pagination.total);
      },
      (e) => setError(errorText(e)),
    );
  }, []);
  if (error)
    return html`<p class="alert alert-error" role="alert">OpenTelemetry data could not be loaded: ${error}</p>`;
  if (!items) return html`<p class="loading" role="status">Loading spans and logs…</p>`;
  if (items.length === 0)
    return html`<div class="empty"><p>No OpenTelemetry span or log record carries this call's Call-ID (attribute sip.call_id or similar) in its time window.</p></div>`;
  return html`<div class="otlp-related">
    ${total > items.length && html`<p class="alert" role="status">Showing the first ${items.length} of ${total} spans and log records.</p>`}
    <div class="table-wrap">
      <table class="grid-table" aria-label="OpenTelemetry spans and logs">
        <thead>
          <tr><th>Time</th><th>Kind</th><th>Service</th><th>Span name or log body</th><th>Status or severity</th><th>Trace ID</th></tr>
        </thead>
        <tbody>
          ${items.flatMap((it, i) => {
            const row = html`<tr
              key=${`r${i}`}
              tabindex="0"
              aria-expanded=${open === i ? "true" : "false"}
              class=${open === i ? "selected" : ""}
              onClick=${() => setOpen(open === i ? undefined : i)}
              onKeyDown=${(e: KeyboardEvent) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  setOpen(open === i ? undefined : i);
                }
              }}
            >
              <td class="mono nowrap">${formatTime(it.timestamp_us / 1000, true)}</td>
              <td>${it.kind === "span" ? "Span" : "Log"}</td>
              <td>${it.service_name ?? ""}</td>
              <td class="wrap">${it.text ?? ""}</td>
              <td class=${it.kind === "span" && it.status_code === 2 ? "error" : ""}>${level(it)}</td>
              <td class="mono">${it.trace_id ?? ""}</td>
            </tr>`;
            // One flat keyed list: the row keeps its element (and the focus) when its detail opens or closes.
            if (open !== i) return [row];
            return [
              row,
              html`<tr key=${`d${i}`} class="detail"><td colspan="6"><pre class="mono wrap" aria-label="Attributes">${JSON.stringify(it.attributes, null, 2)}</pre></td></tr>`,
            ];
          })}
        </tbody>
      </table>
    </div>
  </div>`;
}
