/** Admin and settings pages behind `#/admin/<page>` and `#/settings`. */
import { html } from "../lib/html.ts";
import type { Me } from "../lib/types.ts";
import { UsersPage } from "./users.ts";
import { TokensPage } from "./tokens.ts";
import { AliasesPage } from "./aliases.ts";
import { MappingsPage } from "./mappings.ts";
import { SettingsPage } from "./settings.ts";

export { SettingsPage };

export function AdminPage({ page, me }: { page: string; me: Me }) {
  switch (page) {
    case "users":
      return me.is_admin ? html`<${UsersPage} me=${me} />` : html`<p class="alert alert-error" role="alert">Only administrators manage users.</p>`;
    case "tokens":
      return html`<${TokensPage} me=${me} />`;
    case "aliases":
      return html`<${AliasesPage} me=${me} />`;
    case "mappings":
      return html`<${MappingsPage} me=${me} />`;
    default:
      return html`<p class="alert alert-error" role="alert">There is no page “${page}”.</p>`;
  }
}
