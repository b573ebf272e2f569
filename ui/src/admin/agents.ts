/**
 * Capture agents (admin; Agents tag): every HEP capture id and source address ingest has seen, with
 * first and last packet and the packet count. The list is written by ingest every 10 s; an agent
 * can be forgotten (it reappears when it sends again), which is all `/agents` allows.
 */
import { del, errorText, get, type ListBody } from "../lib/api.ts";
import { formatTime } from "../lib/format.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import { LoadState, Page, useLoad } from "./common.ts";

interface Agent {
  node_id: string;
  node_name: string;
  ip: string;
  first_seen: string;
  last_seen: string;
  packets: number;
}

export function AgentsPage() {
  const agents = useLoad(() => get<ListBody<Agent>>("/agents?sort=-last_seen&page[limit]=1000").then((r) => r.data.items));
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
