import { valueText, type Row } from "../post-filter.ts";
import { cellText, printable, textWidth, truncate } from "./columns.ts";

/**
 * The row formats of `svc search` (docs/CLI.md "Output formats"): `table`, `vertical`, `csv`,
 * `json`. Pure: rows and columns in, text out.
 */

/** Widest a table cell gets before it is cut, so one long Call-ID or payload cannot eat the line. */
export const MAX_CELL = 48;

/**
 * Aligned columns separated by two spaces, a dashed rule under the header, every line cut to
 * `width` with an ellipsis. The count line is the caller's (it knows about limits and filters).
 */
export function renderTable(rows: readonly Row[], columns: readonly string[], width: number): string[] {
  const cells = rows.map((r) => columns.map((c) => cellText(r[c])));
  const widths = columns.map((c, i) =>
    Math.min(MAX_CELL, Math.max(textWidth(c), ...cells.map((row) => textWidth(row[i]!)))),
  );
  const line = (vals: readonly string[]) =>
    truncate(
      vals
        .map((v, i) => {
          const t = truncate(v, widths[i]!);
          return i === vals.length - 1 ? t : t + " ".repeat(widths[i]! - textWidth(t));
        })
        .join("  ")
        .trimEnd(),
      width,
    );
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)];
}

/** One block per row, `name: value` with names right-aligned; multi-line values stay multi-line, indented. */
export function renderVertical(rows: readonly Row[], columns: readonly string[]): string[] {
  const w = Math.max(0, ...columns.map(textWidth));
  const out: string[] = [];
  rows.forEach((r, i) => {
    out.push(`${"*".repeat(27)} ${i + 1}. row ${"*".repeat(27)}`);
    for (const c of columns) {
      const lines = printable(valueText(r[c]).replace(/\t/g, " "))
        .replace(/\r\n|\r/g, "\n")
        .replace(/\n+$/, "")
        .split("\n");
      out.push(`${c.padStart(w)}: ${lines[0] ?? ""}`);
      for (const more of lines.slice(1)) out.push(`${" ".repeat(w + 2)}${more}`);
    }
  });
  return out;
}

/** RFC 4180 §2: a field with a comma, quote, CR or LF is quoted, quotes doubled. */
export function csvField(v: unknown): string {
  const s = valueText(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** RFC 4180: a header record, then one record per row, every record ended by CRLF. */
export function renderCsv(rows: readonly Row[], columns: readonly string[]): string {
  const rec = (vals: readonly unknown[]) => `${vals.map(csvField).join(",")}\r\n`;
  return rec(columns) + rows.map((r) => rec(columns.map((c) => r[c]))).join("");
}

/** An array of row objects with exactly `columns` as members (missing ones as null). */
export function renderJson(rows: readonly Row[], columns: readonly string[]): string {
  const picked = rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  return `${JSON.stringify(picked, null, 2)}\n`;
}
