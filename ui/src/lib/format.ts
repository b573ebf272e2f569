/** Display helpers shared by tables, ladder and charts. Pure; unit-tested in format.test.ts. */

import { fromZoneInput, toZoneInput, wallTime, type Zone } from "./time-range.ts";

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

let zone: Zone = "local";
/** The zone every time is shown in (the time picker's Local / UTC toggle, lib/dashboard-time.ts). */
export function setFormatZone(z: Zone): void {
  zone = z;
}

/** Wall time `YYYY-MM-DD HH:MM:SS.mmm`, local or UTC (operators compare with their own clocks and logs). */
export function formatTime(ms: number, withDate = true): string {
  const t = `${wallTime(ms, zone)}.${pad(new Date(ms).getMilliseconds(), 3)}`;
  return withDate ? t : t.slice(11);
}

/** A gap between two messages: `+0.250 ms`, `+12.3 ms`, `+1.204 s`, `+3 min 05 s`. */
export function formatDelta(ms: number): string {
  const sign = ms < 0 ? "-" : "+";
  const a = Math.abs(ms);
  if (a < 1) return `${sign}${a.toFixed(3)} ms`;
  if (a < 1000) return `${sign}${a.toFixed(1)} ms`;
  if (a < 60_000) return `${sign}${(a / 1000).toFixed(3)} s`;
  return `${sign}${Math.floor(a / 60_000)} min ${pad(Math.floor((a % 60_000) / 1000))} s`;
}

/** A duration for call info: `850 ms`, `4.2 s`, `1:02:03`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Value for `<input type="datetime-local">` in local time. */
export const toLocalInput = (ms: number): string => toZoneInput(ms, "local");

/** `<input type="datetime-local">` value → epoch ms (undefined when empty or invalid). */
export const fromLocalInput = (v: string): number | undefined => fromZoneInput(v, "local");

/**
 * Colour class of a SIP event (method or response code): requests by method family, responses by
 * class (RFC 3261 §7.2: 1xx provisional, 2xx success, 3xx redirect, 4xx-6xx failure).
 */
export function eventClass(event: string): string {
  if (/^\d{3}$/.test(event)) {
    const c = event[0];
    if (c === "1") return "ev-1xx";
    if (c === "2") return "ev-2xx";
    if (c === "3") return "ev-3xx";
    if (c === "4") return "ev-4xx";
    return "ev-5xx";
  }
  switch (event.toUpperCase()) {
    case "INVITE":
      return "ev-invite";
    case "ACK":
      return "ev-ack";
    case "BYE":
    case "CANCEL":
      return "ev-bye";
    case "REGISTER":
      return "ev-register";
    default:
      return "ev-other";
  }
}

/** Start line summary of a SIP payload: `INVITE` / `200 OK`, plus whether it carries SDP. */
export function sipLabel(payload: string, fallback: string): { label: string; sdp: boolean } {
  const first = payload.slice(0, Math.max(0, payload.indexOf("\n")) || payload.length).replace(/\r$/, "");
  let label = fallback;
  const resp = /^SIP\/2\.0\s+(\d{3})\s*(.*)$/.exec(first);
  if (resp) label = `${resp[1]} ${resp[2] ?? ""}`.trim();
  else {
    const req = /^([A-Z]+)\s+\S+\s+SIP\/2\.0$/.exec(first);
    if (req) label = req[1]!;
  }
  const sdp = /\r?\n(content-type|c)\s*:\s*application\/sdp/i.test(payload);
  return { label, sdp };
}

/** Host label for tables: `alias (ip:port)` or `ip:port`. */
export function hostLabel(ip: unknown, port: unknown, alias: unknown): string {
  const addr = port === null || port === undefined || port === "" ? String(ip ?? "") : `${ip}:${port}`;
  return typeof alias === "string" && alias ? `${alias} (${addr})` : addr;
}

/** Any cell value as text. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * The warning of an exported file that misses a node (its `x-svc-partial` header, docs/ARCHITECTURE.md
 * "Reads over several nodes"), in the words of the results bar's partial answer; undefined for a whole file.
 */
export function partialFileText(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  return `Partial file: ${header}. The messages of those nodes are missing.`;
}
