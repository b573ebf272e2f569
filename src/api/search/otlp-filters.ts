/**
 * Structured-search conditions over the OTLP tables (docs/API.md "Search form request" rules 3 and 5, field ids
 * `trace_id`, `name`, `service_name`, `type` / `types`; docs/OTLP.md "Searching"). A key applies
 * only where its column exists (a metric has no trace_id); other keys are ignored (rule 2).
 */
import { AppError } from "../../core/index.ts";

export interface OtlpBuilder {
  p(v: string | number): string;
}

/** Attribute keys that carry a SIP Call-ID on a span or log record (docs/OTLP.md "Linking to calls"). */
export const SIP_CALL_ID_ATTRIBUTES = [
  "sip.call_id",
  "sip.callid",
  "sip.call.id",
  "call_id",
  "callid",
  "Call-ID",
] as const;

const METRIC_TYPES = new Map(
  ["Gauge", "Sum", "Histogram", "Summary", "ExponentialHistogram"].map((t) => [t.toLowerCase(), t]),
);

function values(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const x of raw) {
    if (x === null || x === undefined) continue;
    for (const s of String(x).split(";")) if (s.trim() !== "") out.push(s.trim());
  }
  return out;
}

/** Exact match unless the value holds `%` (LIKE); several values OR-ed. */
function exactOrLike(b: OtlpBuilder, col: string, vals: string[]): string | undefined {
  if (vals.length === 0) return undefined;
  return `(${vals.map((x) => `"${col}" ${x.includes("%") ? "LIKE" : "="} ${b.p(x)}`).join(" OR ")})`;
}

function ints(b: OtlpBuilder, col: string, v: unknown, key: string): string | undefined {
  const vals = values(v).map(Number);
  if (vals.some((n) => !Number.isSafeInteger(n)))
    throw new AppError("VALIDATION", `filter.${key}: expected integers`, { details: { fields: [`filter.${key}`] } });
  if (vals.length === 0) return undefined;
  return `"${col}" IN (${vals.map((n) => b.p(n)).join(", ")})`;
}

const attrJson = (columns: ReadonlySet<string>) =>
  columns.has("span_attrs") ? "span_attrs" : columns.has("attributes") ? "attributes" : undefined;

export function otlpCondition(
  b: OtlpBuilder,
  key: string,
  v: unknown,
  columns: ReadonlySet<string>,
): string | undefined {
  const has = (c: string) => columns.has(c);
  switch (key) {
    case "trace_id":
    case "span_id":
    case "parent_span_id":
      // Ids are stored as lower-case hex.
      return has(key)
        ? exactOrLike(
            b,
            key,
            values(v).map((x) => x.toLowerCase()),
          )
        : undefined;
    case "name":
    case "service_name":
    case "scope_name":
    case "unit":
    case "severity_text":
      return has(key) ? exactOrLike(b, key, values(v)) : undefined;
    case "body":
    case "raw": {
      // Text to search in: a substring unless the value is a LIKE pattern (the CLI sends `%…%`).
      const vals = values(v);
      if (!has(key) || vals.length === 0) return undefined;
      return `(${vals.map((x) => (x.includes("%") ? `"${key}" LIKE ${b.p(x)}` : `contains("${key}", ${b.p(x)})`)).join(" OR ")})`;
    }
    case "type":
    case "types": {
      if (!has("type")) return undefined;
      const vals = values(v).map((x) => METRIC_TYPES.get(x.toLowerCase()));
      if (vals.some((x) => x === undefined))
        throw new AppError("VALIDATION", `filter.${key}: metric types are ${[...METRIC_TYPES.values()].join(", ")}`, {
          details: { fields: [`filter.${key}`] },
        });
      return vals.length ? `"type" IN (${vals.map((x) => b.p(x!)).join(", ")})` : undefined;
    }
    case "kind":
    case "kinds":
      return has("kind") ? ints(b, "kind", v, key) : undefined;
    case "status_code":
    case "status_codes":
      return has("status_code") ? ints(b, "status_code", v, key) : undefined;
    case "severity_number":
    case "severity_numbers":
      return has("severity_number") ? ints(b, "severity_number", v, key) : undefined;
    case "payload": {
      const vals = values(v);
      return vals.length && has("raw") ? `(${vals.map((x) => `contains("raw", ${b.p(x)})`).join(" OR ")})` : undefined;
    }
    case "sip_call_id": {
      // The call view asks for the spans and log records of a call by its Call-ID attribute.
      const col = attrJson(columns);
      const vals = values(v);
      if (!col || vals.length === 0) return undefined;
      const ors: string[] = [];
      for (const x of vals) {
        const ph = b.p(x);
        for (const a of SIP_CALL_ID_ATTRIBUTES) ors.push(`json_extract_string("${col}", '$."${a}"') = ${ph}`);
      }
      return `(${ors.join(" OR ")})`;
    }
    default:
      return undefined;
  }
}

/**
 * The SIP Call-ID a span or log record carries (a search result row of otlp_traces or otlp_logs),
 * or undefined: the results grid opens that call from the row (docs/OTLP.md "Linking to calls").
 */
export function sipCallIdOf(row: Record<string, unknown>): string | undefined {
  const text = row.span_attrs ?? row.attributes;
  if (typeof text !== "string" || text === "{}") return undefined;
  let attrs: unknown;
  try {
    attrs = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!attrs || typeof attrs !== "object") return undefined;
  for (const a of SIP_CALL_ID_ATTRIBUTES) {
    const v = (attrs as Record<string, unknown>)[a];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}
