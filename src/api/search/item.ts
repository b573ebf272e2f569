import { isoFromUs, type TableDef } from "../../core/index.ts";
import { sipCallIdOf } from "./otlp-filters.ts";
import type { SearchSettings } from "./tables.ts";

/**
 * One row as an item of a search answer (docs/API.md "Search results"): `id` its place in the
 * order, `sid` the Call-ID, times as ISO text plus `<column>_us`, data_extra as JSON, the IP
 * aliases of both ends, and where it is stored.
 */
export function searchItem(
  settings: SearchSettings,
  r: Record<string, unknown>,
  i: number,
  def: TableDef,
  key: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { id: i + 1 };
  if ("session_id" in r) out.sid = r.session_id;
  for (const c of def.columns) {
    const v = r[c.name];
    if (c.type === "timestamp" && v !== null && v !== undefined) {
      out[c.name] = isoFromUs(Number(v));
      out[`${c.name}_us`] = Number(v);
    } else if (c.name === "data_extra" && typeof v === "string") {
      try {
        out[c.name] = JSON.parse(v);
      } catch {
        out[c.name] = v;
      }
    } else out[c.name] = v ?? null;
  }
  // Aliases may name a port and a capture id (docs/ADMIN.md, "IP aliases").
  const int = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const captureId = int(r.capture_id);
  if (typeof r.src_ip === "string")
    out.src_alias = settings.aliases.resolveAlias(r.src_ip, int(r.src_port), captureId) ?? null;
  if (typeof r.dst_ip === "string")
    out.dst_alias = settings.aliases.resolveAlias(r.dst_ip, int(r.dst_port), captureId) ?? null;
  // A span or log record that carries a SIP Call-ID links to that call (docs/OTLP.md).
  if (key === "main.otlp_traces" || key === "main.otlp_logs") out.sip_call_id = sipCallIdOf(r) ?? null;
  out.storage_lake = "svc_lake";
  out.storage_volume = key;
  return out;
}
