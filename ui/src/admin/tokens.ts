/** API tokens: own (administrators: all); the secret is shown once, right after creation. */
import { useState } from "preact/hooks";
import { del, errorText, get, patch, post, type ListBody } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import type { Me } from "../lib/types.ts";
import { LoadState, Page, inputValue, shortDate, useEditorForm, useLoad, yesNo } from "./common.ts";

interface Token {
  id: string;
  name: string;
  token_prefix: string;
  username: string;
  active: boolean;
  expires_at: string | null;
  limit_calls: number;
  calls: number;
  last_used_at: string | null;
}

/** `meta.token_access` of `GET /tokens` (docs/ADMIN.md, "API tokens"). */
interface TokenAccess {
  enabled: boolean;
  header: string;
  config_key: string;
  message: string;
}

export function TokensPage({ me }: { me: Me }) {
  const [access, setAccess] = useState<TokenAccess | undefined>();
  const tokens = useLoad(() =>
    get<ListBody<Token> & { meta: { token_access?: TokenAccess } }>("/tokens?sort=name&page[limit]=1000").then((r) => {
      setAccess(r.meta.token_access);
      return r.data.items;
    }),
  );
  const [form, setForm] = useState<{ name: string; expires: string; limit: string } | null>(null);
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const [error, setError] = useState<string | undefined>();
  const formRef = useEditorForm(form ? "new" : null, () => setForm(null));

  const create = async (e: Event) => {
    e.preventDefault();
    if (!form) return;
    setError(undefined);
    try {
      const r = await post<{ data: Token & { token: string } }>("/tokens", {
        name: form.name,
        ...(form.expires ? { expires_at: new Date(form.expires).toISOString() } : {}),
        ...(form.limit ? { limit_calls: Number(form.limit) } : {}),
      });
      setSecret({ name: r.data.name, token: r.data.token });
      setForm(null);
      await tokens.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const toggle = async (t: Token) => {
    try {
      await patch(`/tokens/${t.id}`, { active: !t.active });
      await tokens.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const remove = async (t: Token) => {
    if (!confirm(`Delete the token “${t.name}”? Clients using it stop working at once.`)) return;
    try {
      await del(`/tokens/${t.id}`);
      notify(`Token ${t.name} deleted`);
      await tokens.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      notify("Token copied");
    } catch {
      notify("The browser refused the clipboard: select the token and copy it", "error");
    }
  };

  return html`<${Page}
    title="API tokens"
    intro=${`Static tokens for scripts and integrations, sent in the ${access?.header ?? "API token"} header. They act as their owner${me.is_admin ? "; as an administrator you see everyone's" : ""}.`}
    actions=${html`<button type="button" class="btn btn-primary" onClick=${() => setForm({ name: "", expires: "", limit: "" })}>New token</button>`}
  >
    ${
      access &&
      !access.enabled &&
      html`<p class="alert alert-warn" role="alert">${access.message}.${me.is_admin ? "" : " Ask an administrator of this appliance."} Tokens created now are refused until then.</p>`
    }
    ${
      secret &&
      html`<div class="card secret" role="alert">
      <h2>Token “${secret.name}” created</h2>
      <p><strong>Copy it now: it is shown only once.</strong> The appliance keeps only its hash.</p>
      <div class="secret-row"><input readonly class="mono" aria-label="Token secret" value=${secret.token} onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} />
        <button type="button" class="btn" onClick=${() => copy(secret.token)}>Copy</button>
        <button type="button" class="btn btn-ghost" onClick=${() => setSecret(null)}>Done</button></div>
    </div>`
    }
    ${
      form &&
      html`<form class="card form-grid" ref=${formRef} onSubmit=${create} aria-label="New API token">
      <h2>New API token</h2>
      ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
      <label>Name<input required value=${form.name} onInput=${(e: Event) => setForm({ ...form, name: inputValue(e) })} /></label>
      <label>Expires (optional)<input type="datetime-local" value=${form.expires} onInput=${(e: Event) => setForm({ ...form, expires: inputValue(e) })} /></label>
      <label>Call limit (0 or empty = unlimited)<input inputmode="numeric" pattern="[0-9]*" value=${form.limit} onInput=${(e: Event) => setForm({ ...form, limit: inputValue(e) })} /></label>
      <div class="form-actions span-all">
        <button type="button" class="btn btn-ghost" onClick=${() => setForm(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary">Create token</button>
      </div>
    </form>`
    }
    <${LoadState} what="API tokens" error=${tokens.error} loading=${!tokens.data} />
    ${tokens.data && tokens.data.length === 0 && html`<div class="empty"><p>No API tokens yet.</p></div>`}
    ${
      tokens.data &&
      tokens.data.length > 0 &&
      html`<table class="grid-table admin-table" aria-label="API tokens">
      <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Owner</th><th scope="col">Active</th><th scope="col">Expires</th><th scope="col">Calls</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${tokens.data.map(
          (t) => html`<tr key=${t.id}>
            <td>${t.name}</td>
            <td class="mono">${t.token_prefix}…</td>
            <td class="mono">${t.username}</td>
            <td>${yesNo(t.active)}</td>
            <td class="mono">${shortDate(t.expires_at)}</td>
            <td class="mono">${t.calls}${t.limit_calls ? ` / ${t.limit_calls}` : ""}</td>
            <td class="mono">${shortDate(t.last_used_at)}</td>
            <td class="row-actions">
              <button type="button" class="btn btn-ghost" onClick=${() => toggle(t)} aria-label=${`${t.active ? "Disable" : "Enable"} ${t.name}`}>${t.active ? "Disable" : "Enable"}</button>
              <button type="button" class="btn btn-ghost btn-danger" onClick=${() => remove(t)} aria-label=${`Delete ${t.name}`}>Delete</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  <//>`;
}
