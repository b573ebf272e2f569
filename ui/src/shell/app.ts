/**
 * The shell: who is signed in (GET /me), the OAuth return (`?token=` / `?oauth_error=`), the hash
 * router (`#/`, `#/d/<dashboard>`, `#/admin/<page>`, `#/settings`), the header, the transaction
 * window and notices. Any 401 sends the user back to the login page, with a sentence saying why
 * when a session existed (never on a first visit).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { del, errorText, get, onUnauthorized, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { displayZone, openTransaction, serverFeatures, toasts } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { LoginResponse, Me } from "../lib/types.ts";
import { DashboardPage } from "../widgets/dashboard-page.ts";
import { TransactionWindow } from "../txn/window.ts";
import { AdminPage, SettingsPage } from "../admin/pages.ts";
import { Avatar } from "./avatar.ts";
import { FirstPasswordDialog } from "./first-password.ts";
import { JTI_KEY, Login } from "./login.ts";
import { MainNav } from "./nav.ts";

export function useHashRoute(): string {
  const [route, setRoute] = useState(location.hash.replace(/^#/, "") || "/");
  useEffect(() => {
    const on = () => setRoute(location.hash.replace(/^#/, "") || "/");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

async function exchangeOAuthToken(): Promise<string | undefined> {
  const q = new URLSearchParams(location.search);
  const token = q.get("token");
  const oauthError = q.get("oauth_error");
  if (!token && !oauthError) return undefined;
  q.delete("token");
  q.delete("oauth_error");
  history.replaceState(null, "", `${location.pathname}${q.size ? `?${q}` : ""}${location.hash}`);
  if (oauthError) return `Single sign-on failed: ${oauthError}`;
  try {
    const r = await post<LoginResponse>("/auth/oauth2/token", { token });
    localStorage.setItem(JTI_KEY, r.jti);
    return undefined;
  } catch (e) {
    return `Single sign-on failed: ${errorText(e)}`;
  }
}

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>();
  // The first-login password dialog: "Later" hides it until the next page load; `session` renews
  // the page after the dialog's own new sign-in, so no widget keeps an answer of the ended session.
  const [later, setLater] = useState(false);
  const [session, setSession] = useState(0);
  const relogging = useRef(false);
  const route = useHashRoute();
  useStore(displayZone); // every shown time follows the Local / UTC switch of the time picker

  const loadMe = () =>
    get<{ data: Me }>("/me").then(
      (r) => {
        serverFeatures.set(r.data.features);
        setMe(r.data);
      },
      () => setMe(null),
    );

  useEffect(() => {
    exchangeOAuthToken().then((n) => {
      if (n) setNotice(n);
      void loadMe();
    });
    return onUnauthorized(() => {
      // Between the password change and the dialog's new sign-in, the old session is refused: not an end.
      if (relogging.current) return;
      // Only a session this browser had can have ended: a first visit (no jti stored) just signs in.
      if (localStorage.getItem(JTI_KEY)) setNotice("Your session has ended: sign in again.");
      localStorage.removeItem(JTI_KEY);
      openTransaction.set(null);
      setMe(null);
    });
  }, []);

  const logout = async () => {
    const jti = localStorage.getItem(JTI_KEY);
    try {
      if (jti) await del(`/auth/sessions/${encodeURIComponent(jti)}`);
    } catch {
      // already revoked or expired: the user is signed out either way
    }
    localStorage.removeItem(JTI_KEY);
    openTransaction.set(null);
    setNotice("You are signed out.");
    setMe(null);
  };

  if (me === undefined) return html`<p class="boot" role="status">Loading the dashboard…</p>`;
  if (me === null)
    return html`<${Login}
      notice=${notice}
      onLogin=${() => {
        setNotice(undefined);
        void loadMe();
      }}
    />`;

  let page;
  if (route.startsWith("/admin/")) page = html`<${AdminPage} page=${route.slice(7)} me=${me} />`;
  else if (route === "/settings") page = html`<${SettingsPage} me=${me} />`;
  else
    page = html`<${DashboardPage} selected=${route.startsWith("/d/") ? decodeURIComponent(route.slice(3)) : undefined} />`;

  const askPassword = me.must_change_password && !later;
  return html`
    <div class="shell" inert=${askPassword} key=${session}>
      <${Header} me=${me} route=${route} onLogout=${logout} />
      <main id="main" class="main">${page}</main>
      <${TransactionWindow} />
      <${Toasts} />
    </div>
    ${
      askPassword &&
      html`<${FirstPasswordDialog}
        me=${me}
        onChanging=${(on: boolean) => {
          relogging.current = on;
        }}
        onDone=${() => {
          relogging.current = false;
          setSession((n) => n + 1);
          void loadMe();
        }}
        onLater=${me.password_change_can_wait ? () => setLater(true) : undefined}
      />`
    }
  `;
}

function Header({ me, route, onLogout }: { me: Me; route: string; onLogout: () => void }) {
  return html`
    <header class="topbar">
      <a class="skip" href="#main">Skip to content</a>
      <a class="brand" href="#/" aria-label="svc home"><span class="brand-mark" aria-hidden="true"></span>svc</a>
      <${MainNav} me=${me} route=${route} />
      <div class="user">
        <${Avatar} me=${me} />
        <span class="user-name" title=${`signed in via ${me.provider}`}>${me.username}${me.is_admin ? html` <span class="tag">admin</span>` : ""}</span>
        <button type="button" class="btn btn-ghost" onClick=${onLogout}>Sign out</button>
      </div>
    </header>
  `;
}

function Toasts() {
  const list = useStore(toasts);
  return html`<div class="toasts" role="status" aria-live="polite">
    ${list.map((t) => html`<div key=${t.id} class=${`toast toast-${t.tone}`}>${t.text}</div>`)}
  </div>`;
}
