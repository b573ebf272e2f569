/**
 * HEP subscriptions (admin; docs/ADMIN.md "HEP subscriptions"): one mapping document per HEP protocol type and
 * profile. List, create, edit (hepid, profile, label, version, mapping JSON) and delete, as
 * `/hepsubs` allows; the server's 400/409 messages are shown as they come.
 */
import { useState } from "preact/hooks";
import { del, errorText, get, post, put, type ListBody } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import { LoadState, Page, inputValue, shortDate, useEditorForm, useLoad } from "./common.ts";

interface HepSub {
  id: string;
  hepid: number;
  profile: string;
  hep_alias: string;
  version: number;
  mapping: Record<string, unknown>;
  updated_at: string;
}

interface Draft {
  hepid: string;
  profile: string;
  hep_alias: string;
  version: string;
  mapping: string;
}

const EMPTY: Draft = { hepid: "1", profile: "call", hep_alias: "", version: "1", mapping: "{}" };

const draftOf = (s: HepSub): Draft => ({
  hepid: String(s.hepid),
  profile: s.profile,
  hep_alias: s.hep_alias,
  version: String(s.version),
  mapping: JSON.stringify(s.mapping, null, 2),
});

/** The PUT/POST body, or the sentence saying which field is wrong. */
function hepSubBody(d: Draft): { body: Record<string, unknown> } | { error: string } {
  if (!/^\d+$/.test(d.hepid.trim()) || Number(d.hepid) > 65535)
    return { error: "HEP type: a whole number from 0 to 65535 (1 = SIP, 5 = RTCP, 100 = logs)" };
  if (!/^\d+$/.test(d.version.trim()) || Number(d.version) < 1)
    return { error: "Version: a whole number of at least 1" };
  let mapping: unknown;
  try {
    mapping = JSON.parse(d.mapping.trim() || "{}");
  } catch (e) {
    return { error: `Mapping: not valid JSON (${errorText(e)})` };
  }
  if (typeof mapping !== "object" || mapping === null || Array.isArray(mapping))
    return { error: "Mapping: a JSON object, e.g. {}" };
  return {
    body: {
      hepid: Number(d.hepid),
      profile: d.profile.trim(),
      hep_alias: d.hep_alias,
      version: Number(d.version),
      mapping,
    },
  };
}

export function HepSubsPage() {
  const subs = useLoad(() => get<ListBody<HepSub>>("/hepsubs?sort=hepid&page[limit]=1000").then((r) => r.data.items));
  const [editing, setEditing] = useState<{ id: string | null; draft: Draft } | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const save = async (e: Event) => {
    e.preventDefault();
    if (!editing) return;
    const checked = hepSubBody(editing.draft);
    if ("error" in checked) return setError(checked.error);
    setError(undefined);
    setBusy(true);
    try {
      if (editing.id === null) await post("/hepsubs", checked.body);
      else await put(`/hepsubs/${editing.id}`, checked.body);
      notify(`HEP subscription ${editing.draft.hepid}/${editing.draft.profile} saved`);
      setEditing(null);
      await subs.reload();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const remove = async (s: HepSub) => {
    if (!confirm(`Delete the HEP subscription ${s.hepid}/${s.profile}?`)) return;
    try {
      await del(`/hepsubs/${s.id}`);
      notify(`HEP subscription ${s.hepid}/${s.profile} deleted`);
      await subs.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const set = (k: keyof Draft, v: string) => editing && setEditing({ ...editing, draft: { ...editing.draft, [k]: v } });
  const formRef = useEditorForm(editing ? (editing.id ?? "new") : null, () => setEditing(null));
  const label = (s: HepSub) => `${s.hepid} ${s.profile}`;

  return html`<${Page}
    title="HEP subscriptions"
    intro="A mapping document per HEP protocol type and profile (HOMER's hepsub), e.g. which fields of RTCP or log packets to correlate with calls. One subscription per type and profile."
    actions=${html`<button type="button" class="btn btn-primary" onClick=${() => (setError(undefined), setEditing({ id: null, draft: { ...EMPTY } }))}>New subscription</button>`}
  >
    ${
      editing &&
      html`<form class="card form-grid" ref=${formRef} onSubmit=${save} aria-label=${editing.id ? "Edit HEP subscription" : "New HEP subscription"}>
      <h2>${editing.id ? `Edit ${editing.draft.hepid}/${editing.draft.profile}` : "New HEP subscription"}</h2>
      ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
      <label>HEP type<input required class="mono" inputmode="numeric" value=${editing.draft.hepid} onInput=${(e: Event) => set("hepid", inputValue(e))} /></label>
      <label>Profile<input required class="mono" value=${editing.draft.profile} onInput=${(e: Event) => set("profile", inputValue(e))} placeholder="call, registration, default" /></label>
      <label>Label<input value=${editing.draft.hep_alias} onInput=${(e: Event) => set("hep_alias", inputValue(e))} placeholder="SIP, RTCP…" /></label>
      <label>Version<input class="mono" inputmode="numeric" value=${editing.draft.version} onInput=${(e: Event) => set("version", inputValue(e))} /></label>
      <label class="span-all">Mapping (JSON object)<textarea class="mono" rows="8" spellcheck=${false} value=${editing.draft.mapping} onInput=${(e: Event) => set("mapping", (e.target as HTMLTextAreaElement).value)}></textarea></label>
      <div class="form-actions span-all">
        <button type="button" class="btn btn-ghost" onClick=${() => setEditing(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? "Saving…" : "Save subscription"}</button>
      </div>
    </form>`
    }
    <${LoadState} what="HEP subscriptions" error=${subs.error} loading=${!subs.data} />
    ${subs.data && subs.data.length === 0 && html`<div class="empty"><p>No HEP subscriptions yet.</p></div>`}
    ${
      subs.data &&
      subs.data.length > 0 &&
      html`<table class="grid-table admin-table" aria-label="HEP subscriptions">
      <thead><tr><th scope="col">HEP type</th><th scope="col">Profile</th><th scope="col">Label</th><th scope="col">Version</th><th scope="col">Mapping keys</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${subs.data.map(
          (s) => html`<tr key=${s.id}>
            <td class="mono">${s.hepid}</td>
            <td class="mono">${s.profile}</td>
            <td>${s.hep_alias || "—"}</td>
            <td class="mono">${s.version}</td>
            <td class="mono">${Object.keys(s.mapping).join(", ") || "—"}</td>
            <td class="mono">${shortDate(s.updated_at)}</td>
            <td class="row-actions">
              <button type="button" class="btn btn-ghost" aria-label=${`Edit ${label(s)}`} onClick=${() => (setError(undefined), setEditing({ id: s.id, draft: draftOf(s) }))}>Edit</button>
              <button type="button" class="btn btn-ghost btn-danger" aria-label=${`Delete ${label(s)}`} onClick=${() => remove(s)}>Delete</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  <//>`;
}
