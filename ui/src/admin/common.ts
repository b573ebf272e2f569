/** Pieces the admin pages share: a page frame, a loader hook and form field helpers. */
import type { ComponentChildren, RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../lib/api.ts";
import { html } from "../lib/html.ts";

export function Page({
  title,
  intro,
  actions,
  children,
}: {
  title: string;
  intro?: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return html`<div class="page">
    <header class="page-head">
      <div><h1>${title}</h1>${intro && html`<p class="muted">${intro}</p>`}</div>
      <div class="page-actions">${actions}</div>
    </header>
    ${children}
  </div>`;
}

export interface Loaded<T> {
  data: T | null;
  error: string | undefined;
  reload: () => Promise<void>;
}

export function useLoad<T>(load: () => Promise<T>): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | undefined>();
  const reload = () =>
    load().then(
      (d) => {
        setData(d);
        setError(undefined);
      },
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void reload();
  }, []);
  return { data, error, reload };
}

export function LoadState({ what, error, loading }: { what: string; error: string | undefined; loading: boolean }) {
  if (error) return html`<p class="alert alert-error" role="alert">${what} could not be loaded: ${error}</p>`;
  if (loading) return html`<p class="loading" role="status">Loading ${what.toLowerCase()}…</p>`;
  return null;
}

export const inputValue = (e: Event) => (e.target as HTMLInputElement).value;
export const checked = (e: Event) => (e.target as HTMLInputElement).checked;

export const yesNo = (v: boolean) =>
  v ? html`<span class="tag tag-ok">yes</span>` : html`<span class="tag tag-off">no</span>`;

export const shortDate = (iso: string | null) => (iso ? iso.replace("T", " ").slice(0, 16) : "—");

/** What a signed-in user who is not an administrator sees on an admin page. */
export function AdminsOnly({ what }: { what: string }) {
  return html`<div class="page">
    <header class="page-head"><div><h1>${what}</h1></div></header>
    <p class="alert alert-warn" role="alert">Admins only: ${what.toLowerCase()} are managed by administrators. Ask an administrator of this appliance for access.</p>
  </div>`;
}

/**
 * An inline create/edit form of an admin page (docs/UI.md "Forms and dialogs"): when it opens
 * (`openKey` turns non-null, or names another record) focus moves to its first field; Esc closes it
 * from anywhere on the page, as every dialog and popover (a popover above it takes its own Esc
 * first); focus then returns to the button that opened it. Attach the ref to the `<form>`.
 */
export function useEditorForm(openKey: string | null, close: () => void): RefObject<HTMLFormElement | null> {
  const form = useRef<HTMLFormElement>(null);
  const closeRef = useRef(close);
  closeRef.current = close;
  // Layout effect: the cleanup runs as the form leaves the page, so focus is back before the next paint.
  useLayoutEffect(() => {
    if (openKey === null) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    form.current?.querySelector<HTMLElement>("input:not([type=hidden]):not([disabled]), select, textarea")?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      e.preventDefault();
      closeRef.current();
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      // Closed (Esc, Cancel, saved): back to the opener, unless the user has moved on elsewhere.
      const now = document.activeElement;
      if (opener?.isConnected && (!now || now === document.body || !now.isConnected)) opener.focus();
    };
  }, [openKey]);
  return form;
}
