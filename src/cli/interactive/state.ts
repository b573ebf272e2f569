import { SCREEN_FORMATS, SEARCH_FLAGS, type ScreenFormat, type SearchForm } from "../search-options.ts";
import type { Key } from "./keys.ts";

/**
 * The interactive search as a pure state machine (docs/CLI.md "Interactive keys"): a form whose
 * fields are the command-line flags (pre-filled from them), and a results view.
 *   form:    Tab / Shift+Tab (and ↓ / ↑) move, typing edits, Backspace, Ctrl+U clears the field,
 *            ←/→/Space cycle the Format field, Enter searches, Esc quits.
 *   results: f cycles the format, r re-runs the search, ↑ ↓ PgUp PgDn Home End scroll,
 *            Esc goes back to the form, q quits. In the table, ↑ ↓ PgUp PgDn Home End move the
 *            selected row instead and Enter opens its call flow (as sngrep does).
 *   call:    the selected row's call as a ladder (every message of the call and its legs);
 *            ↑ ↓ PgUp PgDn Home End scroll, Esc back to the list, q quits.
 * Ctrl+C quits from anywhere. Effects are carried out by run.ts.
 */
export interface FormField {
  key: string;
  label: string;
  secret?: boolean;
}

/** The flags with a form label, in the flag table's order (search-options.ts). */
export const FORM_FIELDS: readonly FormField[] = SEARCH_FLAGS.flatMap((f) =>
  f.label ? [{ key: f.name, label: f.label, ...(f.secret ? { secret: true } : {}) }] : [],
);

export const FORMAT_FIELD = FORM_FIELDS.findIndex((f) => f.key === "format");

export interface UiState {
  mode: "form" | "results" | "call";
  values: SearchForm;
  focus: number;
  format: ScreenFormat;
  /** One line under the form or the results: errors, notes, "Searching…". */
  status: string;
  busy: boolean;
  /** First visible line of the results. */
  scroll: number;
  /** The table's selected row (0-based), the one Enter opens. */
  selected: number;
  /** Rows in the results (the table's selectable lines). */
  rows: number;
  /** First visible line of the call view. */
  callScroll: number;
}

/** Lines of the table above its first row: the header and the dashed rule. */
export const TABLE_HEAD_LINES = 2;

export type Effect = "none" | "search" | "render" | "call" | "quit";

export function initialState(form: SearchForm): UiState {
  const values: SearchForm = { from: "1h", to: "now", proto: "sip", limit: "50", ...form };
  const f = values.format?.toLowerCase();
  const format = SCREEN_FORMATS.find((x) => x === f) ?? (f === "flow" || f === "ladder" ? "callflow" : "table");
  values.format = format;
  // Start on the first empty required field, else on Call-ID (the usual search).
  const focus = values.host ? FORM_FIELDS.findIndex((x) => x.key === "call-id") : 0;
  return {
    mode: "form",
    values,
    focus,
    format,
    status: "",
    busy: false,
    scroll: 0,
    selected: 0,
    rows: 0,
    callScroll: 0,
  };
}

export const nextFormat = (f: ScreenFormat, step = 1): ScreenFormat =>
  SCREEN_FORMATS[(SCREEN_FORMATS.indexOf(f) + step + SCREEN_FORMATS.length) % SCREEN_FORMATS.length]!;

const withFormat = (s: UiState, format: ScreenFormat): UiState => ({ ...s, format, values: { ...s.values, format } });

function formKey(s: UiState, key: Key): { state: UiState; effect: Effect } {
  const n = FORM_FIELDS.length;
  const field = FORM_FIELDS[s.focus]!;
  const value = s.values[field.key] ?? "";
  const set = (v: string) => ({ state: { ...s, values: { ...s.values, [field.key]: v } }, effect: "none" as const });
  switch (key.name) {
    case "tab":
    case "down":
      return { state: { ...s, focus: (s.focus + 1) % n }, effect: "none" };
    case "backtab":
    case "up":
      return { state: { ...s, focus: (s.focus - 1 + n) % n }, effect: "none" };
    case "enter":
      return { state: s, effect: s.busy ? "none" : "search" };
    case "escape":
      return { state: s, effect: "quit" };
    case "left":
    case "right":
      return s.focus === FORMAT_FIELD
        ? { state: withFormat(s, nextFormat(s.format, key.name === "left" ? -1 : 1)), effect: "none" }
        : { state: s, effect: "none" };
    case "backspace":
      return s.focus === FORMAT_FIELD ? { state: s, effect: "none" } : set([...value].slice(0, -1).join(""));
    case "ctrl-u":
      return s.focus === FORMAT_FIELD ? { state: s, effect: "none" } : set("");
    case "char":
      if (s.focus === FORMAT_FIELD)
        return key.ch === " " || key.ch === "f"
          ? { state: withFormat(s, nextFormat(s.format)), effect: "none" }
          : { state: s, effect: "none" };
      return set(value + (key.ch ?? ""));
    default:
      return { state: s, effect: "none" };
  }
}

/** Scroll keys of a text view: the new first line, or undefined for another key. */
function scrolled(first: number, key: Key, page: number, total: number): number | undefined {
  const to = (n: number) => Math.max(0, Math.min(Math.max(0, total - page), n));
  switch (key.name) {
    case "up":
      return to(first - 1);
    case "down":
    case "enter":
      return to(first + 1);
    case "pageup":
      return to(first - page);
    case "pagedown":
      return to(first + page);
    case "home":
      return to(0);
    case "end":
      return to(total);
    case "char":
      return key.ch === " " ? to(first + page) : undefined;
    default:
      return undefined;
  }
}

/** The table: the keys move the selected row, the view follows it; Enter opens its call. */
function tableKey(s: UiState, key: Key, page: number): { state: UiState; effect: Effect } | undefined {
  if (s.format !== "table" || s.rows === 0) return undefined;
  const select = (n: number) => {
    const selected = Math.max(0, Math.min(s.rows - 1, n));
    const line = TABLE_HEAD_LINES + selected;
    // Row 0 shows the header with it; a row below the page scrolls it to the bottom line.
    const scroll = selected === 0 ? 0 : line < s.scroll ? line : line >= s.scroll + page ? line - page + 1 : s.scroll;
    return { state: { ...s, selected, scroll: Math.max(0, scroll) }, effect: "none" as const };
  };
  switch (key.name) {
    case "up":
      return select(s.selected - 1);
    case "down":
      return select(s.selected + 1);
    case "pageup":
      return select(s.selected - page);
    case "pagedown":
      return select(s.selected + page);
    case "home":
      return select(0);
    case "end":
      return select(s.rows - 1);
    case "enter":
      return { state: s, effect: s.busy ? "none" : "call" };
    default:
      return undefined;
  }
}

function callKey(s: UiState, key: Key, page: number, total: number): { state: UiState; effect: Effect } {
  if (key.name === "escape") return { state: { ...s, mode: "results", callScroll: 0, status: "" }, effect: "render" };
  if (key.name === "char" && key.ch === "q") return { state: s, effect: "quit" };
  const n = scrolled(s.callScroll, key, page, total);
  return { state: n === undefined ? s : { ...s, callScroll: n }, effect: "none" };
}

function resultsKey(s: UiState, key: Key, page: number, total: number): { state: UiState; effect: Effect } {
  const table = tableKey(s, key, page);
  if (table) return table;
  if (key.name === "escape") return { state: { ...s, mode: "form", scroll: 0, selected: 0 }, effect: "none" };
  if (key.name === "char") {
    if (key.ch === "f")
      return { state: { ...withFormat(s, nextFormat(s.format)), scroll: 0, selected: 0 }, effect: "render" };
    if (key.ch === "F")
      return { state: { ...withFormat(s, nextFormat(s.format, -1)), scroll: 0, selected: 0 }, effect: "render" };
    if (key.ch === "r") return { state: s, effect: s.busy ? "none" : "search" };
    if (key.ch === "q") return { state: s, effect: "quit" };
  }
  const n = scrolled(s.scroll, key, page, total);
  return { state: n === undefined ? s : { ...s, scroll: n }, effect: "none" };
}

/** `page` = visible result lines, `total` = result lines (for scrolling limits). */
export function handleKey(s: UiState, key: Key, page: number, total: number): { state: UiState; effect: Effect } {
  if (key.name === "ctrl-c") return { state: s, effect: "quit" };
  if (s.mode === "call") return callKey(s, key, page, total);
  return s.mode === "form" ? formKey(s, key) : resultsKey(s, key, page, total);
}
