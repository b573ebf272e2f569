/**
 * Login page (spec doc 1 "Password login", "OAuth 2.0"): methods from `GET /auth/providers`,
 * password methods ordered by position with the first preselected, the OAuth button, and
 * `auto_redirect` on page load (skipped after an OAuth error so the user is not sent in a loop).
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, get, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import type { LoginMethod, LoginResponse, OAuthMethod, Providers } from "../lib/types.ts";

export const JTI_KEY = "svc.session.jti";

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
        if (auto && !new URLSearchParams(location.search).has("oauth_error") && !sessionStorage.getItem("svc.oauth.auto")) {
          sessionStorage.setItem("svc.oauth.auto", "1");
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
      sessionStorage.removeItem("svc.oauth.auto");
      onLogin();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };

  const usernameId = "login-username";
  return html`
    <main class="login-page">
      <form class="login-card" onSubmit=${submit} aria-labelledby="login-title" aria-busy=${busy}>
        <div class="brand-lg"><span class="brand-mark" aria-hidden="true"></span><span>svc</span></div>
        <h1 id="login-title">Sign in</h1>
        <p class="muted">VoIP capture and troubleshooting</p>
        ${error && html`<p class="alert alert-error" role="alert">${error}</p>`}
        ${methods === null && html`<p class="muted" role="status">Loading sign-in methods…</p>`}
        ${methods &&
        methods.length > 1 &&
        html`<fieldset class="method-choice">
          <legend>Sign in with</legend>
          ${methods.map(
            (m) => html`<label key=${m.type}
              ><input type="radio" name="login-type" value=${m.type} checked=${type === m.type} onChange=${() => setType(m.type)} /> ${m.name}</label
            >`,
          )}
        </fieldset>`}
        ${methods &&
        methods.length > 0 &&
        html`
          <label for=${usernameId}>Username</label>
          <input id=${usernameId} name="username" autocomplete="username" required autofocus value=${username} onInput=${(e: Event) => setUsername((e.target as HTMLInputElement).value)} />
          <label for="login-password">Password</label>
          <input id="login-password" name="password" type="password" autocomplete="current-password" required value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} />
          <button type="submit" class="btn btn-primary btn-block" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
        `}
        ${methods && methods.length === 0 && oauth.length === 0 && !error && html`<p class="alert alert-error" role="alert">No sign-in method is enabled on this appliance.</p>`}
        ${oauth.length > 0 &&
        html`<div class="oauth">
          ${methods && methods.length > 0 && html`<div class="or"><span>or</span></div>`}
          ${oauth.map(
            (o) => html`<a key=${o.name} class="btn btn-block btn-oauth" href=${o.url}
              >${o.provider_image && html`<img src=${o.provider_image} alt="" width="18" height="18" />`} Sign in with ${o.provider_name || o.name}</a
            >`,
          )}
        </div>`}
      </form>
    </main>
  `;
}
