/**
 * The first-login dialog (docs/AUTH.md "First login: change the generated password"): GET /me says
 * `must_change_password` when the bootstrap generated the administrator's password. The dialog asks
 * for the current, a new and a confirmed password, changes it with PATCH /users/{id}, and then signs
 * in again itself with the new password: the change ends every older session of the user, this
 * one included (docs/AUTH.md "Password change ends older sessions"), so the page would otherwise
 * fall back to the login page.
 *
 * Required (coordinator.auth.require_first_password_change, the default): no Later button, and Esc
 * does not close it, since Esc closes what the user opened and this dialog was not opened by the
 * user; a stray Esc must not leave a password that was printed to the journal in use. Focus stays
 * inside (Tab wraps) and the page behind is inert. When the configuration allows waiting, Later and
 * Esc close it until the next page load.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText, patch, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import type { LoginResponse, Me } from "../lib/types.ts";
import { JTI_KEY } from "./login.ts";

const MIN_LENGTH = 8; // MIN_PASSWORD_LENGTH of src/auth/passwords.ts (the PATCH body's minLength)

interface Props {
  me: Me;
  /** True from the password change until the new sign-in ended (the old session is refused meanwhile). */
  onChanging: (on: boolean) => void;
  /** Called after the change and the new sign-in. */
  onDone: () => void;
  /** Present when the configuration lets the change wait. */
  onLater?: (() => void) | undefined;
}

const FOCUSABLE = "input:not([disabled]), button:not([disabled]), [href], [tabindex]:not([tabindex='-1'])";

export function FirstPasswordDialog({ me, onChanging, onDone, onLater }: Props) {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const first = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => first.current?.focus(), []);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onLater?.();
      return;
    }
    if (e.key !== "Tab" || !box.current) return;
    const items = Array.from(box.current.querySelectorAll<HTMLElement>(FOCUSABLE));
    if (items.length === 0) return;
    const at = items.indexOf(document.activeElement as HTMLElement);
    const to = e.shiftKey ? (at <= 0 ? items.length - 1 : at - 1) : at === items.length - 1 || at < 0 ? 0 : at + 1;
    e.preventDefault();
    items[to]!.focus();
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (next.length < MIN_LENGTH) return setError(`The new password needs at least ${MIN_LENGTH} characters.`);
    if (next !== confirm) return setError("The new password and its confirmation differ.");
    if (next === current) return setError("Choose a password other than the generated one.");
    setError(undefined);
    setBusy(true);
    onChanging(true);
    try {
      await patch(`/users/${encodeURIComponent(me.id ?? "")}`, { password: next, current_password: current });
    } catch (err) {
      onChanging(false);
      setError(errorText(err));
      setBusy(false);
      return;
    }
    try {
      const r = await post<LoginResponse>("/auth/sessions", {
        username: me.username,
        password: next,
        type: "internal",
      });
      localStorage.setItem(JTI_KEY, r.jti);
      onDone();
    } catch (err) {
      onChanging(false);
      setError(`The password was changed, but signing in again failed: ${errorText(err)}`);
      setBusy(false);
    }
  };

  const field = (id: string, label: string, value: string, set: (v: string) => void, auto: string, ref?: unknown) =>
    html`<label for=${id}>${label}</label>
      <input id=${id} ref=${ref} type="password" autocomplete=${auto} required value=${value} onInput=${(e: Event) => set((e.target as HTMLInputElement).value)} />`;

  return html`<div class="overlay overlay-center overlay-modal">
    <div ref=${box} class="dialog dialog-small" role="dialog" aria-modal="true" aria-labelledby="first-pw-title" aria-describedby="first-pw-why" onKeyDown=${onKeyDown}>
      <form class="dialog-form" onSubmit=${submit}>
        <h2 id="first-pw-title">Change the generated password</h2>
        <p id="first-pw-why" class="muted small">
          ${me.username}'s password was generated at the first start and shown in the service's log. Choose your own${onLater ? "" : " to continue"}.
        </p>
        ${field("first-pw-current", "Current password", current, setCurrent, "current-password", first)}
        ${field("first-pw-new", "New password", next, setNext, "new-password")}
        ${field("first-pw-confirm", "Confirm new password", confirm, setConfirm, "new-password")}
        ${error && html`<p class="field-error" role="alert">${error}</p>`}
        <div class="dialog-actions">
          ${onLater && html`<button type="button" class="btn" onClick=${onLater}>Later</button>`}
          <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? "Changing…" : "Change password"}</button>
        </div>
      </form>
    </div>
  </div>`;
}
