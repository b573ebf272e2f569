import { AppError } from "../../core/index.ts";
import { hepTableKey } from "../../core/protocols.ts";
import type { SettingsStore } from "../../settings/index.ts";
import type { VirtualField } from "./filters.ts";

/**
 * What a search reads besides its filter: the table of a (proto_type, event_type) pair, and the
 * virtual fields the mappings define (docs/API.md "Search results", "Protocol types").
 */
/** The lake table of a search: SIP by event type, line protocol by `<schema>__<table>`, OTLP and other HEP types by number. */
export function tableKeyFor(protoType: number, eventType: string): string | undefined {
  if (protoType === 1) {
    const p = eventType || "call";
    if (p !== "call" && p !== "registration" && p !== "default")
      throw new AppError("VALIDATION", `event_type "${eventType}" is not call, registration or default`, {
        details: { fields: ["filter.event_type"] },
      });
    return hepTableKey(1, p);
  }
  if (protoType === 300) {
    const m = /^([A-Za-z0-9_]+)__([A-Za-z0-9_]+)$/.exec(eventType);
    if (!m)
      throw new AppError("VALIDATION", `event_type for line protocol must be <schema>__<table>, got "${eventType}"`, {
        details: { fields: ["filter.event_type"] },
      });
    return `${m[1]}.${m[2]}`;
  }
  if (protoType >= 200 && protoType <= 202)
    return `main.${["otlp_traces", "otlp_metrics", "otlp_logs"][protoType - 200]}`;
  if (Number.isInteger(protoType) && protoType >= 0 && protoType <= 65535) return hepTableKey(protoType);
  throw new AppError("VALIDATION", `proto_type ${protoType} is not a HEP protocol type`, {
    details: { fields: ["filter.proto_type"] },
  });
}

/**
 * What a search reads of the settings database: the mappings' virtual fields and the IP aliases.
 * A node answering a coordinator (src/cluster/node-search.ts) has none: the coordinator sends its
 * virtual fields and names the aliases itself.
 */
export type SearchSettings = Pick<SettingsStore, "mappings" | "aliases">;

/** No mappings, no aliases (a node's search for a coordinator). */
export const NO_SEARCH_SETTINGS = {
  mappings: { list: () => ({ items: [] }) },
  aliases: { resolveAlias: () => undefined },
} as unknown as SearchSettings;

/** The virtual fields (mapping fields with `virtual`) the mappings of (hepid, profile) define. */
export function virtualFieldsOf(settings: SearchSettings, hepid: number, profile: string): Map<string, VirtualField> {
  const out = new Map<string, VirtualField>();
  const page = settings.mappings.list({ hepid, profile }, { limit: 10 } as never);

  for (const m of page.items) {
    for (const f of m.fieldsMapping) {
      const field = f as { id?: unknown; virtual?: { kind?: unknown; path?: unknown; match?: unknown } };
      const v = field.virtual;
      if (typeof field.id !== "string" || !v || typeof v.path !== "string") continue;
      const match = v.match === "equals" || v.match === "absent" || v.match === "present" ? v.match : "like";
      out.set(field.id, { path: v.path, match });
    }
  }
  return out;
}
