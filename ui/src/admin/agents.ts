/**
 * Capture agents (admin; Agents tag): every HEP capture id and source address ingest has seen, with
 * first and last packet and the packet count. The list is written by ingest every 10 s; an agent
 * can be forgotten (it reappears when it sends again), which is all `/agents` allows. On an edge
 * (ingest.forward) the page also shows the forwarding state from /health (docs/DEPLOY.md "Watching an edge").
 */
import { useEffect } from "preact/hooks";
import { del, errorText, get, type ListBody } from "../lib/api.ts";
import { formatTime } from "../lib/format.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import { LoadState, Page, useLoad } from "./common.ts";

/** The `forward` check of GET /health on an edge (docs/DEPLOY.md "Watching an edge"). */
interface ForwardCheck {
  state: "ok" | "lagging" | "down";
  observedValue?: number;
  backlog_bytes: number;
  backlog_packets: number;
  dropped_packets: number;
  output?: string;
}

/** Store-and-forward to the central, when this appliance is an edge (ingest.forward). */
function ForwardStatus() {
  const fwd = useLoad(async () => {
    const r = await fetch("/health");
    const body = (await r.json()) as { checks?: { forward?: ForwardCheck[] } };
    return body.checks?.forward?.[0] ?? null;
  });
  // Every 5 s: the state moves while the page is open (a link going down, the catch-up).
  useEffect(() => {
    const t = setInterval(() => void fwd.reload(), 5000);
    return () => clearInterval(t);
  }, []);
  const f = fwd.data;
  if (!f) return null;
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return html`<section aria-label="Forwarding to the central" class="forward-status">
    <h2>Forwarding to the central</h2>
    <table class="grid-table admin-table" aria-label="Forwarding to the central">
      <thead><tr><th scope="col">State</th><th scope="col">Lag</th><th scope="col">Backlog</th><th scope="col">Dropped</th></tr></thead>
      <tbody><tr>
        <td>${f.state}</td>
        <td class="mono">${(f.observedValue ?? 0).toFixed(1)} s</td>
        <td class="mono">${f.backlog_packets.toLocaleString("en-US")} packets, ${mb(f.backlog_bytes)}</td>
        <td class="mono">${f.dropped_packets.toLocaleString("en-US")}</td>
      </tr></tbody>
    </table>
    ${f.output && html`<p class="muted">${f.output}</p>`}
  </section>`;
}

interface Agent {
  node_id: string;
  node_name: string;
  ip: string;
  first_seen: string;
  last_seen: string;
  packets: number;
}

export function AgentsPage() {
  const agents = useLoad(() =>
    get<ListBody<Agent>>("/agents?sort=-last_seen&page[limit]=1000").then((r) => r.data.items),
  );
  const forget = async (a: Agent) => {
    if (!confirm(`Forget the agent ${a.node_id} at ${a.ip}? It reappears when it sends again.`)) return;
    try {
      await del(`/agents/${encodeURIComponent(a.node_id)}?ip=${encodeURIComponent(a.ip)}`);
      notify(`Agent ${a.node_id} at ${a.ip} forgotten`);
      await agents.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const when = (iso: string) => formatTime(Date.parse(iso)).slice(0, 19);
  return html`<${Page}
    title="Capture agents"
    intro="HEP senders seen by this appliance, by capture ID and source address (Kamailio siptrace, heplify, rtpengine…). Updated every 10 seconds."
    actions=${html`<button type="button" class="btn" onClick=${() => agents.reload()}>Refresh</button>`}
  >
    <${ForwardStatus} />
    <${LoadState} what="Capture agents" error=${agents.error} loading=${!agents.data} />
    ${agents.data && agents.data.length === 0 && html`<div class="empty"><p>No capture agent has sent HEP to this appliance yet. Agents appear here within 10 seconds of their first packet.</p></div>`}
    ${
      agents.data &&
      agents.data.length > 0 &&
      html`<table class="grid-table admin-table" aria-label="Capture agents">
      <thead><tr><th scope="col">Capture ID</th><th scope="col">Node name</th><th scope="col">Address</th><th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Packets</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${agents.data.map(
          (a) => html`<tr key=${`${a.node_id}|${a.ip}`}>
            <td class="mono">${a.node_id}</td>
            <td>${a.node_name || "—"}</td>
            <td class="mono">${a.ip}</td>
            <td class="mono">${when(a.first_seen)}</td>
            <td class="mono">${when(a.last_seen)}</td>
            <td class="mono">${a.packets.toLocaleString("en-US")}</td>
            <td class="row-actions">
              <button type="button" class="btn btn-ghost btn-danger" aria-label=${`Forget ${a.node_id} at ${a.ip}`} onClick=${() => forget(a)}>Forget</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  <//>`;
}
