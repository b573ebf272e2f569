import { valueText } from "../post-filter.ts";
import { num } from "./row-time.ts";
import { renderTable } from "./text-formats.ts";

/**
 * `svc agent` views (docs/CLI.md "Capture-agent client"): node, packet counters and the HEP
 * transport table of `GET /api/stats`, and the health summary of `GET /health`. Agents differ in
 * what they send, so every member is optional: a missing one prints `-`.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const show = (v: unknown): string =>
  v === undefined || v === null || v === ""
    ? "-"
    : Array.isArray(v)
      ? v.map(valueText).join(", ") || "-"
      : valueText(v);

export const PACKET_COUNTERS = [
  "total",
  "sip",
  "rtcp",
  "rtcp_fail",
  "rtp",
  "dns",
  "log",
  "hep_sent",
  "duplicates",
  "unknown",
] as const;
export const TRANSPORT_COLUMNS = ["addr", "proto", "connected", "reconnects", "sent", "errors"] as const;

/** 3725 → `1h2m5s` (the agent's own `uptime` text wins when it sends one). */
export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${d ? `${d}d` : ""}${d || h ? `${h}h` : ""}${d || h || m ? `${m}m` : ""}${s % 60}s`;
}

function uptime(stats: Obj): string {
  if (typeof stats.uptime === "string" && stats.uptime !== "") return stats.uptime;
  const secs = num(stats.uptime) ?? num(stats.uptime_seconds);
  return secs === undefined ? "-" : formatUptime(secs);
}

/** Transports under `transport` (heplify) or `transports`. */
export function transportsOf(stats: Obj): Obj[] {
  const t = stats.transport ?? stats.transports;
  return Array.isArray(t) ? t.filter(isObj) : [];
}

function section(title: string, pairs: ReadonlyArray<[string, unknown]>): string[] {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return [title, ...pairs.map(([k, v]) => `  ${k.padEnd(w)}  ${show(v)}`)];
}

export function renderAgentStats(stats: unknown, width: number): string[] {
  const s = isObj(stats) ? stats : {};
  const packets = isObj(s.packets) ? s.packets : {};
  const out = [
    ...section("Node", [
      ["node_name", s.node_name],
      ["node_id", s.node_id],
      ["interfaces", s.interfaces],
      ["uptime", uptime(s)],
    ]),
    "",
    ...section(
      "Packets",
      PACKET_COUNTERS.map((k) => [k, packets[k]]),
    ),
    "",
    "Transports",
  ];
  const transports = transportsOf(s);
  if (transports.length === 0) out.push("  (none)");
  else {
    const rows = transports.map((t) =>
      Object.fromEntries(
        TRANSPORT_COLUMNS.map((c) => [
          c,
          c === "connected" && typeof t[c] === "boolean" ? (t[c] ? "yes" : "no") : show(t[c]),
        ]),
      ),
    );
    out.push(...renderTable(rows, TRANSPORT_COLUMNS, width - 2).map((l) => `  ${l}`));
  }
  return out;
}

export interface HealthView {
  status: "ok" | "DEGRADED";
  connectedTransports?: number;
  queue?: number;
  bufferBytes?: number;
}

/** DEGRADED when no HEP transport is connected (docs/CLI.md "Capture-agent client"); without a count, the agent's own status decides. */
export function healthView(health: unknown): HealthView {
  const h = isObj(health) ? health : {};
  const connected = num(h.connected_transports);
  const ok = connected !== undefined ? connected > 0 : String(h.status ?? "").toLowerCase() === "ok";
  const queue = num(h.queue_size) ?? num(h.queue);
  const buffer = num(h.buffer_size_bytes) ?? num(h.buffer_size) ?? num(h.buffer);
  return {
    status: ok ? "ok" : "DEGRADED",
    ...(connected !== undefined ? { connectedTransports: connected } : {}),
    ...(queue !== undefined ? { queue } : {}),
    ...(buffer !== undefined ? { bufferBytes: buffer } : {}),
  };
}

export function renderHealth(v: HealthView): string[] {
  return section("", [
    ["status", v.status],
    ["connected_transports", v.connectedTransports],
    ["queue", v.queue],
    ["buffer", v.bufferBytes === undefined ? undefined : `${v.bufferBytes} bytes`],
  ])
    .slice(1)
    .map((l) => l.slice(2));
}
