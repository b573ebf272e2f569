/**
 * Login page (docs/AUTH.md "The login page"): methods from `GET /auth/providers`, all enabled ones
 * in ascending position (the password form stands at its first method's position, with the first
 * password method preselected; the OAuth button with its image at the provider's). `auto_redirect`
 * sends the browser to the provider on page load only: not after a sign-out, an expired session or
 * a failed single sign-on (`notice` is set then), and once per page load.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, get, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import type { LoginMethod, LoginResponse, OAuthMethod, Providers } from "../lib/types.ts";

export const JTI_KEY = "svc.session.jti";

/** Auto redirect happens at most once per page load (a sign-out does not reload the page). */
let autoRedirectTried = false;

interface Props {
  onLogin: () => void;
  notice?: string | undefined;
}

export function Login({ onLogin, notice }: Props) {
  const [methods, setMethods] = useState<LoginMethod[] | null>(null);
  const [oauth, setOauth] = useState<OAuthMethod[]>([]);
  const [type, setType] = useState("internal");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [redirecting, setRedirecting] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>(notice);

  useEffect(() => {
    get<Providers>("/auth/providers").then(
      (p) => {
        const pw = [p.data.internal, p.data.ldap].filter((m) => m.enable).sort((a, b) => a.position - b.position);
        const sso = p.data.oauth2.filter((o) => o.enable).sort((a, b) => a.position - b.position);
        setMethods(pw);
        setOauth(sso);
        if (pw[0]) setType(pw[0].type);
        const auto = sso.find((o) => o.auto_redirect);
        const firstLoad = !autoRedirectTried;
        autoRedirectTried = true;
        if (auto && firstLoad && notice === undefined) {
          setRedirecting(auto.provider_name || auto.name);
          location.assign(auto.url);
        }
      },
      (e) => {
        setMethods([]);
        setError(errorText(e));
      },
    );
  }, []);

  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const r = await post<LoginResponse>("/auth/sessions", { username, password, type });
      localStorage.setItem(JTI_KEY, r.jti);
      onLogin();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };

  const passwordForm =
    methods && methods.length > 0
      ? html`<div class="password-login" key="password">
          ${
            methods.length > 1 &&
            html`<fieldset class="method-choice">
            <legend>Sign in with</legend>
            ${methods.map(
              (m) => html`<label key=${m.type}
                ><input type="radio" name="login-type" value=${m.type} checked=${type === m.type} onChange=${() => setType(m.type)} /> ${m.name}</label
              >`,
            )}
          </fieldset>`
          }
          <label for="login-username">Username</label>
          <input id="login-username" name="username" autocomplete="username" required autofocus value=${username} onInput=${(e: Event) => setUsername((e.target as HTMLInputElement).value)} />
          <label for="login-password">Password</label>
          <input id="login-password" name="password" type="password" autocomplete="current-password" required value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} />
          <button type="submit" class="btn btn-primary btn-block" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
        </div>`
      : null;
  const buttons = oauth.map(
    (o) =>
      html`<a key=${`oauth-${o.name}`} class="btn btn-block btn-oauth" href=${o.url}
        >${o.provider_image && html`<img src=${o.provider_image} alt="" width="18" height="18" />`}<span>Sign in with ${o.provider_name || o.name}</span></a
      >`,
  );
  // One list in ascending position: the password form at its first method's position.
  const blocks: Array<{ position: number; node: unknown }> = [
    ...(passwordForm && methods?.[0] ? [{ position: methods[0].position, node: passwordForm }] : []),
    ...oauth.map((o, i) => ({ position: o.position, node: buttons[i] })),
  ].sort((a, b) => a.position - b.position);

  return html`
    <main class="login-page">
      <form class="login-card" onSubmit=${submit} aria-labelledby="login-title" aria-busy=${busy}>
        <div class="brand-lg"><span class="brand-mark" aria-hidden="true"></span><span>svc</span></div>
        <h1 id="login-title">Sign in</h1>
        <p class="muted">VoIP capture and troubleshooting</p>
        ${error && html`<p class="alert alert-error" role="alert">${error}</p>`}
        ${methods === null && html`<p class="muted" role="status">Loading sign-in methods…</p>`}
        ${redirecting && html`<p class="muted" role="status">Redirecting to ${redirecting}…</p>`}
        ${blocks.map((b, i) => html`${i > 0 && html`<div class="or" key=${`or-${i}`}><span>or</span></div>`}${b.node}`)}
        ${methods && methods.length === 0 && oauth.length === 0 && !error && html`<p class="alert alert-error" role="alert">No sign-in method is enabled on this appliance.</p>`}
      </form>
    </main>
  `;
}
