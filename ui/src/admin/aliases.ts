/**
 * IP aliases: address or CIDR, optionally one port and one HEP capture id → name, used in result
 * tables and ladders (docs/ADMIN.md, "IP aliases"). Changes are admin only.
 */
import type { Static } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import type { AliasSchema } from "../../../src/api/aliases/index.ts";
import { cidrProblem } from "../../../src/core/ip.ts";
import { del, errorText, get, post, put, type ListBody } from "../lib/api.ts";
import { aliasScope } from "../lib/aliases.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import type { Me } from "../lib/types.ts";
import { LoadState, Page, checked, inputValue, useEditorForm, useLoad, yesNo } from "./common.ts";

/** A row of `GET /aliases`: the route's own schema (a type-only import). */
type Alias = Static<typeof AliasSchema>;

/** The form keeps port and capture id as typed; `toBody` checks them. */
interface Draft {
  ip: string;
  name: string;
  group: string;
  active: boolean;
  port: string;
  capture_id: string;
}

const MAX_CAPTURE_ID = 4294967295;

const draftOf = (a: Alias): Draft => ({
  ip: a.ip,
  name: a.name,
  group: a.group,
  active: a.active,
  port: a.port === null ? "" : String(a.port),
  capture_id: a.capture_id === null ? "" : String(a.capture_id),
});

/** The request body, or the sentence saying which field is wrong (the server checks the same). */
function aliasBody(d: Draft): { body: Omit<Alias, "id" | "created_at" | "updated_at"> } | { error: string } {
  const ipProblem = cidrProblem(d.ip);
  if (ipProblem) return { error: ipProblem };
  const int = (s: string, lo: number, hi: number) =>
    /^\d+$/.test(s.trim()) && Number(s) >= lo && Number(s) <= hi ? Number(s) : undefined;
  const port = d.port.trim() === "" ? null : int(d.port, 1, 65535);
  if (port === undefined) return { error: "Port: a whole number from 1 to 65535, or empty for every port" };
  const captureId = d.capture_id.trim() === "" ? null : int(d.capture_id, 1, MAX_CAPTURE_ID);
  if (captureId === undefined)
    return {
      error: `Capture ID: a whole number from 1 to ${MAX_CAPTURE_ID} (the agent's HEP capture id), or empty for every capture point`,
    };
  return { body: { ip: d.ip.trim(), name: d.name, group: d.group, active: d.active, port, capture_id: captureId } };
}

export function AliasesPage({ me }: { me: Me }) {
  const aliases = useLoad(() => get<ListBody<Alias>>("/aliases?sort=name&page[limit]=1000").then((r) => r.data.items));
  const [editing, setEditing] = useState<{ id: string | null; draft: Draft } | null>(null);
  const [error, setError] = useState<string | undefined>();
  const save = async (e: Event) => {
    e.preventDefault();
    if (!editing) return;
    const checkedBody = aliasBody(editing.draft);
    if ("error" in checkedBody) return setError(checkedBody.error);
    setError(undefined);
    try {
      if (editing.id === null) await post("/aliases", checkedBody.body);
      else await put(`/aliases/${editing.id}`, checkedBody.body);
      notify(`Alias ${editing.draft.name} saved`);
      setEditing(null);
      await aliases.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async (a: Alias) => {
    if (!confirm(`Delete the alias ${a.name} (${aliasScope(a)})?`)) return;
    try {
      await del(`/aliases/${a.id}`);
      await aliases.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const set = (k: keyof Draft, v: string | boolean) =>
    editing && setEditing({ ...editing, draft: { ...editing.draft, [k]: v } });
  const formRef = useEditorForm(editing ? (editing.id ?? "new") : null, () => setEditing(null));
  return html`<${Page}
    title="IP aliases"
    intro="Names for addresses and networks (10.0.0.0/8, 2001:db8::/32), optionally only on one port and one capture point. The most specific active alias names a host in results and ladders: the longest address match first, then an alias with a port, then one with a capture ID."
    actions=${
      me.is_admin &&
      html`<button type="button" class="btn btn-primary" onClick=${() => setEditing({ id: null, draft: { ip: "", name: "", group: "", active: true, port: "", capture_id: "" } })}>New alias</button>`
    }
  >
    ${
      editing &&
      html`<form class="card form-grid" ref=${formRef} onSubmit=${save} aria-label=${editing.id ? "Edit alias" : "New alias"}>
      <h2>${editing.id ? "Edit alias" : "New alias"}</h2>
      ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
      <label>Address or CIDR<input required class="mono" value=${editing.draft.ip} onInput=${(e: Event) => set("ip", inputValue(e))} placeholder="10.0.0.1 or 10.0.0.0/24" /></label>
      <label>Name<input required value=${editing.draft.name} onInput=${(e: Event) => set("name", inputValue(e))} /></label>
      <label>Port (optional)<input class="mono" inputmode="numeric" value=${editing.draft.port} onInput=${(e: Event) => set("port", inputValue(e))} placeholder="every port" /></label>
      <label>Capture ID (optional)<input class="mono" inputmode="numeric" value=${editing.draft.capture_id} onInput=${(e: Event) => set("capture_id", inputValue(e))} placeholder="every capture point" /></label>
      <label>Group<input value=${editing.draft.group} onInput=${(e: Event) => set("group", inputValue(e))} /></label>
      <label class="check"><input type="checkbox" checked=${editing.draft.active} onChange=${(e: Event) => set("active", checked(e))} /> Active</label>
      <div class="form-actions span-all">
        <button type="button" class="btn btn-ghost" onClick=${() => setEditing(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary">Save alias</button>
      </div>
    </form>`
    }
    <${LoadState} what="Aliases" error=${aliases.error} loading=${!aliases.data} />
    ${aliases.data && aliases.data.length === 0 && html`<div class="empty"><p>No aliases yet: hosts show as addresses.</p></div>`}
    ${
      aliases.data &&
      aliases.data.length > 0 &&
      html`<table class="grid-table admin-table" aria-label="IP aliases">
      <thead><tr><th scope="col">Name</th><th scope="col">Address</th><th scope="col">Port</th><th scope="col">Capture ID</th><th scope="col">Group</th><th scope="col">Active</th>${me.is_admin && html`<th scope="col"><span class="sr-only">Actions</span></th>`}</tr></thead>
      <tbody>
        ${aliases.data.map(
          (a) => html`<tr key=${a.id}>
            <td>${a.name}</td><td class="mono">${a.ip}</td><td class="mono">${a.port ?? html`<span class="muted">every</span>`}</td><td class="mono">${a.capture_id ?? html`<span class="muted">every</span>`}</td><td>${a.group || "—"}</td><td>${yesNo(a.active)}</td>
            ${
              me.is_admin &&
              html`<td class="row-actions">
              <button type="button" class="btn btn-ghost" aria-label=${`Edit ${a.name}`} onClick=${() => setEditing({ id: a.id, draft: draftOf(a) })}>Edit</button>
              <button type="button" class="btn btn-ghost btn-danger" aria-label=${`Delete ${a.name}`} onClick=${() => remove(a)}>Delete</button>
            </td>`
            }
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  <//>`;
}
