/** Admin and settings pages behind `#/admin/<page>` and `#/settings`. */
import { html } from "../lib/html.ts";
import type { Me } from "../lib/types.ts";
import { UsersPage } from "./users.ts";
import { TokensPage } from "./tokens.ts";
import { AliasesPage } from "./aliases.ts";
import { MappingsPage } from "./mappings.ts";
import { SettingsPage } from "./settings.ts";
import { HepSubsPage } from "./hepsubs.ts";
import { AgentsPage } from "./agents.ts";
import { ImportPage } from "./import.ts";
import { AdminsOnly } from "./common.ts";

export { SettingsPage };

export function AdminPage({ page, me }: { page: string; me: Me }) {
  switch (page) {
    case "users":
      return me.is_admin ? html`<${UsersPage} me=${me} />` : html`<${AdminsOnly} what="Users" />`;
    case "tokens":
      return html`<${TokensPage} me=${me} />`;
    case "aliases":
      return html`<${AliasesPage} me=${me} />`;
    case "mappings":
      return html`<${MappingsPage} me=${me} />`;
    case "hepsubs":
      return me.is_admin ? html`<${HepSubsPage} />` : html`<${AdminsOnly} what="HEP subscriptions" />`;
    case "agents":
      return me.is_admin ? html`<${AgentsPage} />` : html`<${AdminsOnly} what="Capture agents" />`;
    case "import":
      return html`<${ImportPage} />`;
    default:
      return html`<p class="alert alert-error" role="alert">There is no page “${page}”.</p>`;
  }
}
