/** Users (admin): list, create, edit (groups, admin, active, password), delete. */
import { useState } from "preact/hooks";
import { del, errorText, get, patch, post, type ListBody } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { notify } from "../lib/state.ts";
import type { Me } from "../lib/types.ts";
import { LoadState, Page, checked, inputValue, shortDate, useEditorForm, useLoad, yesNo } from "./common.ts";

interface User {
  id: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  user_group: string;
  is_admin: boolean;
  is_active: boolean;
  created_at: string;
}

type Draft = {
  username: string;
  password: string;
  email: string;
  first_name: string;
  last_name: string;
  user_group: string;
  is_admin: boolean;
  is_active: boolean;
};
const EMPTY: Draft = {
  username: "",
  password: "",
  email: "",
  first_name: "",
  last_name: "",
  user_group: "",
  is_admin: false,
  is_active: true,
};

const draftOf = (u: User): Draft => ({
  username: u.username,
  password: "",
  email: u.email,
  first_name: u.first_name,
  last_name: u.last_name,
  user_group: u.user_group,
  is_admin: u.is_admin,
  is_active: u.is_active,
});

export function UsersPage({ me }: { me: Me }) {
  const users = useLoad(() => get<ListBody<User>>("/users?sort=username&page[limit]=1000").then((r) => r.data.items));
  const [editing, setEditing] = useState<{ id: string | null; draft: Draft } | null>(null);
  const [error, setError] = useState<string | undefined>();
  const formRef = useEditorForm(editing ? (editing.id ?? "new") : null, () => setEditing(null));

  const save = async (e: Event) => {
    e.preventDefault();
    if (!editing) return;
    setError(undefined);
    const d = editing.draft;
    try {
      if (editing.id === null) await post("/users", d);
      else {
        const { username: _u, password, ...rest } = d;
        await patch(`/users/${editing.id}`, password ? { ...rest, password } : rest);
      }
      notify(editing.id === null ? `User ${d.username} created` : `User ${d.username} saved`);
      setEditing(null);
      await users.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const remove = async (u: User) => {
    if (!confirm(`Delete the user ${u.username} with their dashboards, settings and tokens?`)) return;
    try {
      await del(`/users/${u.id}`);
      notify(`User ${u.username} deleted`);
      await users.reload();
    } catch (err) {
      notify(errorText(err), "error");
    }
  };
  const set = (k: keyof Draft, v: string | boolean) =>
    editing && setEditing({ ...editing, draft: { ...editing.draft, [k]: v } });
  const text = (k: keyof Draft, label: string, type = "text", required = false) =>
    html`<label>${label}<input type=${type} required=${required} value=${String(editing?.draft[k] ?? "")} onInput=${(e: Event) => set(k, inputValue(e))} autocomplete="off" /></label>`;

  return html`<${Page}
    title="Users"
    intro="Accounts of the internal login. LDAP and single-sign-on users appear here once they exist in the settings database."
    actions=${html`<button type="button" class="btn btn-primary" onClick=${() => setEditing({ id: null, draft: { ...EMPTY } })}>New user</button>`}
  >
    ${
      editing &&
      html`<form class="card form-grid" ref=${formRef} onSubmit=${save} aria-label=${editing.id ? "Edit user" : "New user"}>
      <h2>${editing.id ? `Edit ${editing.draft.username}` : "New user"}</h2>
      ${error && html`<p class="alert alert-error span-all" role="alert">${error}</p>`}
      ${editing.id === null ? text("username", "Username", "text", true) : null}
      ${text("password", editing.id ? "New password (leave empty to keep)" : "Password", "password", editing.id === null)}
      ${text("email", "Email", "email")} ${text("first_name", "First name")} ${text("last_name", "Last name")} ${text("user_group", "Group")}
      <label class="check"><input type="checkbox" checked=${editing.draft.is_admin} onChange=${(e: Event) => set("is_admin", checked(e))} /> Administrator</label>
      <label class="check"><input type="checkbox" checked=${editing.draft.is_active} onChange=${(e: Event) => set("is_active", checked(e))} /> Active</label>
      <div class="form-actions span-all">
        <button type="button" class="btn btn-ghost" onClick=${() => setEditing(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary">${editing.id ? "Save user" : "Create user"}</button>
      </div>
    </form>`
    }
    <${LoadState} what="Users" error=${users.error} loading=${!users.data} />
    ${
      users.data &&
      html`<table class="grid-table admin-table" aria-label="Users">
      <thead><tr><th scope="col">Username</th><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Group</th><th scope="col">Admin</th><th scope="col">Active</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
      <tbody>
        ${users.data.map(
          (u) => html`<tr key=${u.id}>
            <td class="mono">${u.username}${u.username === me.username ? html` <span class="tag">you</span>` : ""}</td>
            <td>${`${u.first_name} ${u.last_name}`.trim() || "—"}</td>
            <td>${u.email || "—"}</td>
            <td>${u.user_group || "—"}</td>
            <td>${yesNo(u.is_admin)}</td>
            <td>${yesNo(u.is_active)}</td>
            <td class="mono">${shortDate(u.created_at)}</td>
            <td class="row-actions">
              <button type="button" class="btn btn-ghost" aria-label=${`Edit ${u.username}`} onClick=${() => setEditing({ id: u.id, draft: draftOf(u) })}>Edit</button>
              <button type="button" class="btn btn-ghost btn-danger" aria-label=${`Delete ${u.username}`} onClick=${() => remove(u)}>Delete</button>
            </td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  <//>`;
}
