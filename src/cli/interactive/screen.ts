import { printable, textWidth, truncate } from "../views/columns.ts";
import { FORMAT_FIELD, FORM_FIELDS, TABLE_HEAD_LINES, type UiState } from "./state.ts";

/**
 * The full-screen frames of the interactive search: exactly `height` lines, none wider than
 * `width`. Pure; run.ts adds the cursor-home and clear-to-end sequences. The focused field is
 * marked with `›` (readable in a plain screen dump) and shown in reverse video.
 */
const REVERSE = "\x1b[7m";
const RESET = "\x1b[0m";

/** Splits rendered output into screen lines: any line ending, tabs as spaces, no control characters. */
export function screenLines(text: string): string[] {
  const ls = text.split(/\r\n|\n|\r/).map((l) => printable(l.replace(/\t/g, "    ")));
  if (ls.at(-1) === "") ls.pop();
  return ls;
}

function header(left: string, right: string, width: number): string {
  const gap = width - textWidth(left) - textWidth(right);
  return gap >= 2 ? `${left}${" ".repeat(gap)}${right}` : truncate(left, width);
}

function fit(lines: string[], width: number, height: number): string[] {
  const out = lines.slice(0, height).map((l) => truncate(l, width));
  while (out.length < height) out.push("");
  return out;
}

export function formFrame(s: UiState, width: number, height: number): string[] {
  const labelW = Math.max(...FORM_FIELDS.map((f) => f.label.length));
  const lines = [header("svc search · interactive", "Tab/Shift+Tab move · Enter search · Esc quit", width), ""];
  // Only the fields that fit, scrolled so the focused one is visible.
  const room = Math.max(1, height - 4);
  const start = Math.min(Math.max(0, s.focus - room + 1), Math.max(0, FORM_FIELDS.length - room));
  let highlight: { line: number; from: number } | undefined;
  FORM_FIELDS.slice(start, start + room).forEach((f, k) => {
    const i = start + k;
    const focused = i === s.focus;
    const raw = s.values[f.key] ?? "";
    let value = f.secret ? "•".repeat([...raw].length) : printable(raw);
    if (i === FORMAT_FIELD) value = `◀ ${s.format} ▶${focused ? "   (←/→ or Space)" : ""}`;
    else if (focused) value += " "; // the cursor cell
    const prefix = `${focused ? "›" : " "} ${f.label.padEnd(labelW)}  `;
    if (focused && i !== FORMAT_FIELD) highlight = { line: lines.length, from: prefix.length };
    lines.push(`${prefix}${value}`);
  });
  const body = fit(lines, width, height - 1);
  if (highlight) {
    const l = [...body[highlight.line]!];
    body[highlight.line] =
      `${l.slice(0, highlight.from).join("")}${REVERSE}${l.slice(highlight.from).join("")}${RESET}`;
  }
  return [...body, truncate(s.busy ? "Searching…" : s.status, width)];
}

/** A scrolled text view under a header line; `highlight` (a line of `lines`) in reverse video. */
function textView(
  left: string,
  keys: string,
  lines: readonly string[],
  first: number,
  status: string,
  width: number,
  height: number,
  highlight?: number,
): string[] {
  const page = Math.max(1, height - 2);
  const visible = lines.slice(first, first + page);
  const range = lines.length ? `lines ${first + 1}-${first + visible.length} of ${lines.length}` : "no output";
  const body = fit([header(left, keys, width), ...visible], width, height - 1);
  if (highlight !== undefined && highlight >= first && highlight < first + visible.length) {
    const at = 1 + highlight - first;
    body[at] = `${REVERSE}${body[at]!.padEnd(width)}${RESET}`;
  }
  return [...body, truncate([range, status].filter(Boolean).join(" · "), width)];
}

export function resultsFrame(
  s: UiState,
  result: readonly string[],
  title: string,
  width: number,
  height: number,
): string[] {
  const table = s.format === "table" && s.rows > 0;
  const keys = table
    ? "Enter call flow · f format · r re-run · ↑↓ PgUp PgDn · Esc back · q quit"
    : "f format · r re-run · ↑↓ PgUp PgDn · Esc back · q quit";
  const status = s.busy ? "Searching…" : s.status;
  return textView(
    `svc search · ${title} · ${s.format}`,
    keys,
    result,
    s.scroll,
    status,
    width,
    height,
    table ? TABLE_HEAD_LINES + s.selected : undefined,
  );
}

/** The selected row's call as a ladder (state.ts "call"). */
export function callFrame(
  s: UiState,
  lines: readonly string[],
  title: string,
  width: number,
  height: number,
): string[] {
  return textView(
    `svc search · ${title}`,
    "↑↓ PgUp PgDn · Esc back to the list · q quit",
    lines,
    s.callScroll,
    s.busy ? "Loading the call…" : s.status,
    width,
    height,
  );
}

/** Visible result lines per page for a terminal of `height` rows. */
export const resultsPage = (height: number) => Math.max(1, height - 2);
