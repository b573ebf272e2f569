/**
 * The main navigation of the top bar (docs/UI.md "Top bar"): every page a link, never cut. On a
 * wide screen the links sit in the bar and wrap onto a second row when they do not fit; on a
 * narrow one (CSS `max-width: 700px`) they fold into a "Menu" button whose popover lists them
 * (lib/popover.ts: Esc and an outside click close it, arrow keys move between the links).
 */
import { html } from "../lib/html.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import type { Me } from "../lib/types.ts";

interface NavLink {
  href: string;
  label: string;
  active: boolean;
}

/** The pages this user may open, in the order of the bar. */
export function navLinks(me: Me, route: string): NavLink[] {
  const page = (href: string, label: string): NavLink => ({ href, label, active: route === href });
  return [
    { href: "/", label: "Dashboards", active: route === "/" || route.startsWith("/d/") },
    ...(me.is_admin ? [page("/admin/users", "Users")] : []),
    page("/admin/tokens", "API tokens"),
    page("/admin/aliases", "IP aliases"),
    page("/admin/mappings", "Mappings"),
    ...(me.is_admin ? [page("/admin/hepsubs", "HEP subscriptions"), page("/admin/agents", "Agents")] : []),
    page("/admin/import", "Import PCAP"),
    page("/settings", "Settings"),
  ];
}

export function MainNav({ me, route }: { me: Me; route: string }) {
  const pop = usePopover({ label: "Pages", kind: "menu" });
  const links = navLinks(me, route);
  const current = links.find((l) => l.active);
  return html`<nav class="nav" aria-label="Main">
    <div class="nav-links">
      ${links.map((l) => html`<a key=${l.href} href=${`#${l.href}`} class=${l.active ? "nav-link active" : "nav-link"} aria-current=${l.active ? "page" : undefined}>${l.label}</a>`)}
    </div>
    <span class="nav-menu">
      <button type="button" class="btn btn-ghost nav-menu-btn" ...${pop.trigger}>
        <span aria-hidden="true">☰</span> Menu${current ? html`<span class="nav-current"> · ${current.label}</span>` : ""}
      </button>
      <${PopoverPanel} pop=${pop} class="menu-pop">
        ${links.map(
          (l) =>
            html`<a key=${l.href} role="menuitem" href=${`#${l.href}`} class=${l.active ? "menu-item active" : "menu-item"} aria-current=${l.active ? "page" : undefined} onClick=${() => pop.close()}>${l.label}</a>`,
        )}
      </${PopoverPanel}>
    </span>
  </nav>`;
}
