import { t } from "elysia";
import { AppError } from "../../core/index.ts";
import { timeBound, windowMs } from "../openapi/schemas.ts";

/**
 * What a structured search body (docs/API.md "Search form request") says about where to look: the
 * table (`filter.proto_type`, `filter.event_type`) and the window (`timestamp.from/to`). Shared by
 * the search and the histogram (docs/HISTOGRAM.md), so both read the same rows.
 */
const HOUR_MS = 3_600_000;

/** Epoch ms, ISO 8601 or "YYYY-MM-DD HH:MM:SS" (UTC) → epoch ms; 400 naming the field otherwise. */
function timeArg(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v === "number" && Number.isFinite(v)) return windowMs(v);
  if (typeof v === "string") {
    if (/^-?\d+$/.test(v.trim())) return windowMs(Number(v));
    const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v.replace(" ", "T")}Z`);
    if (!Number.isNaN(ms)) return windowMs(ms);
  }
  throw new AppError("VALIDATION", `${field}: expected epoch milliseconds or an ISO 8601 time`, {
    details: { fields: [field] },
  });
}

export function window(from: unknown, to: unknown, fieldPrefix: string): { fromMs: number; toMs: number } {
  const toMs = timeArg(to, `${fieldPrefix}to`) ?? Date.now();
  const fromMs = timeArg(from, `${fieldPrefix}from`) ?? toMs - HOUR_MS;
  if (fromMs > toMs)
    throw new AppError("VALIDATION", `${fieldPrefix}from is after ${fieldPrefix}to`, {
      details: { fields: [`${fieldPrefix}from`] },
    });
  return { fromMs, toMs };
}

/** The `filter` member of a search body (a new schema object per route: Elysia annotates the ones it compiles). */
export const searchFilter = () =>
  t.Optional(
    t.Record(t.String(), t.Unknown(), {
      description:
        "proto_type, event_type and one key per form field id (docs/API.md, Search form request); OTLP (proto_type 200-202): trace_id, span_id, name, service_name, type/types, kind, status_code, severity_number, body, raw, payload, sip_call_id (docs/OTLP.md)",
    }),
  );

/** The `timestamp` member of a search body. */
export const searchWindow = () =>
  t.Optional(
    t.Object(
      {
        from: timeBound("start, epoch ms or ISO 8601 (default: to minus 1 hour)"),
        to: timeBound("end, epoch ms or ISO 8601 (default now)"),
      },
      { additionalProperties: true },
    ),
  );

export interface SearchScope {
  protoType: number;
  eventType: string;
  filter: Record<string, unknown>;
  fromMs: number;
  toMs: number;
}

/** Table and window of a search body; proto_type defaults to 1 (SIP), event_type to call (SIP) or default. */
export function searchScope(body: {
  filter?: Record<string, unknown> | undefined;
  timestamp?: { from?: unknown; to?: unknown } | undefined;
}): SearchScope {
  const filter = body.filter ?? {};
  const protoType = filter.proto_type === undefined ? 1 : Number(filter.proto_type);
  if (!Number.isInteger(protoType))
    throw new AppError("VALIDATION", "filter.proto_type: expected an integer", {
      details: { fields: ["filter.proto_type"] },
    });
  const eventType = typeof filter.event_type === "string" ? filter.event_type : protoType === 1 ? "call" : "default";
  return { protoType, eventType, filter, ...window(body.timestamp?.from, body.timestamp?.to, "timestamp.") };
}
