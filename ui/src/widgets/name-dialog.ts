/**
 * A small modal dialog that asks for one name (docs/UI.md "Forms and dialogs"): a labelled input,
 * OK and Cancel; Enter saves, Esc or a click outside cancels, focus returns to what opened it.
 * Used for a new dashboard and a rename, and for saving or renaming saved filters (with their
 * options under the input), instead of window.prompt (which the browser draws outside
 * the page, unstyled, without the page's keyboard rules).
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../lib/api.ts";
import { html } from "../lib/html.ts";

interface Props {
  title: string;
  label: string;
  initial: string;
  onCancel: () => void;
  /** Saves the trimmed name; a thrown error is shown in the dialog. */
  onOk: (name: string) => Promise<void>;
  /** Longest name the input takes (default 100). */
  maxLength?: number;
  /** Why the trimmed, non-empty name cannot be saved, shown instead of saving; undefined when it can. */
  problem?: (name: string) => string | undefined;
  /** More of the form under the input (options, notes), given the trimmed name as typed so far. */
  extra?: (name: string) => unknown;
  /** The OK button's text for the trimmed name (default "OK"). */
  okText?: (name: string) => string;
}

export function NameDialog({ title, label, initial, onCancel, onOk, maxLength = 100, problem, extra, okText }: Props) {
  const [name, setName] = useState(initial);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    input.current?.focus();
    input.current?.select();
    return () => before?.focus?.();
  }, []);
  const trimmed = name.trim();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (trimmed === "") return setError("Enter a name.");
    const wrong = problem?.(trimmed);
    if (wrong) return setError(wrong);
    setBusy(true);
    try {
      await onOk(trimmed);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return html`<div class="overlay overlay-center" onClick=${(e: MouseEvent) => e.target === e.currentTarget && onCancel()}>
    <div
      class="dialog dialog-small"
      role="dialog"
      aria-modal="true"
      aria-labelledby="name-dialog-title"
      onKeyDown=${(e: KeyboardEvent) => {
        if (e.key !== "Escape") return;
        e.stopPropagation();
        onCancel();
      }}
    >
      <form class="dialog-form" onSubmit=${submit}>
        <h2 id="name-dialog-title">${title}</h2>
        <label for="name-dialog-input">${label}</label>
        <input id="name-dialog-input" ref=${input} value=${name} maxlength=${maxLength} autocomplete="off" onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
        ${extra?.(trimmed)}
        ${error && html`<p class="field-error" role="alert">${error}</p>`}
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${onCancel}>Cancel</button>
          <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? "Saving…" : (okText?.(trimmed) ?? "OK")}</button>
        </div>
      </form>
    </div>
  </div>`;
}
