import { valueText, type Row } from "../post-filter.ts";

/**
 * Which columns a view shows. `--fields` wins (in its order); otherwise every column (docs/CLI.md "Output formats":
 * `--fields` default "all") in the order the coordinator listed them (`keys`), then any member
 * a later row adds.
 */
export function resultColumns(rows: readonly Row[], keys: readonly string[], fields?: readonly string[]): string[] {
  if (fields && fields.length > 0) return [...fields];
  const out = [...keys];
  const seen = new Set(out);
  for (const r of rows) {
    for (const k of Object.keys(r)) {
      if (!seen.has(k)) {
        seen.add(k);
        out.push(k);
      }
    }
  }
  return out;
}

/**
 * What `svc search` shows of a SIP search in `table` and `csv` when `--fields` is not given: the
 * columns an engineer reads (time, method or status, from and to user, Call-ID, source and
 * destination). `--fields all` shows every column the coordinator returned; json and vertical
 * always do (README.md "Terminal").
 */
export const SIP_READABLE_COLUMNS = ["timestamp", "event", "caller", "callee", "session_id", "src", "dst"] as const;

/** `ip:port` (`[v6]:port`); the address alone without a port. */
export function endpointText(ip: unknown, port: unknown): string | null {
  if (typeof ip !== "string" || ip === "") return null;
  const host = ip.includes(":") ? `[${ip}]` : ip;
  return typeof port === "number" && port > 0 ? `${host}:${port}` : ip;
}

/** Rows with `src` and `dst` (`ip:port`) for views that name them; the coordinator sends the parts. */
export function withEndpoints(rows: readonly Row[], columns: readonly string[]): readonly Row[] {
  if (!columns.includes("src") && !columns.includes("dst")) return rows;
  return rows.map((r) => ({
    ...r,
    src: r.src ?? endpointText(r.src_ip, r.src_port),
    dst: r.dst ?? endpointText(r.dst_ip, r.dst_port),
  }));
}

/**
 * The table puts the columns people read first at the left, because a line is cut at the
 * terminal width: time, event, addresses, users, Call-ID, then everything else in key order.
 */
const TABLE_FIRST = [
  "timestamp",
  "time",
  "event",
  "method",
  "response_code",
  "src_ip",
  "src_port",
  "dst_ip",
  "dst_port",
  "caller",
  "callee",
  "session_id",
];

export function tableOrder(columns: readonly string[]): string[] {
  const has = new Set(columns);
  const first = TABLE_FIRST.filter((c) => has.has(c));
  // method and response_code repeat `event` (the method or the status code): after it, not first.
  const lead = has.has("event") ? first.filter((c) => c !== "method" && c !== "response_code") : first;
  const leadSet = new Set(lead);
  return [...lead, ...columns.filter((c) => !leadSet.has(c))];
}

/**
 * Text safe for a terminal: captured payloads are untrusted, and an ESC or C1 byte in a SIP header
 * would otherwise reach the terminal as a control sequence. Line breaks and tabs are the caller's.
 */
export const printable = (s: string) => s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g, "\ufffd");

/** A cell on one line: line breaks shown as `⏎`, tabs as a space, control characters replaced. */
export function cellText(v: unknown): string {
  return printable(
    valueText(v)
      .replace(/\r\n|\r|\n/g, "⏎")
      .replace(/\t/g, " "),
  );
}

/** Display width in code points (good enough for the ASCII and Latin text of SIP headers). */
export const textWidth = (s: string) => [...s].length;

/** Cut to `width` code points, the last one an ellipsis when something was cut. */
export function truncate(s: string, width: number): string {
  const cps = [...s];
  if (cps.length <= width) return s;
  if (width <= 0) return "";
  return `${cps.slice(0, width - 1).join("")}…`;
}

/** Terminal width: the TTY's columns, else `COLUMNS`, else 120 (spec: table truncates to the terminal). */
export function terminalWidth(env: Record<string, string | undefined>, columns: number | undefined): number {
  if (columns && columns > 0) return columns;
  const c = Number(env.COLUMNS);
  return Number.isInteger(c) && c > 0 ? c : 120;
}
