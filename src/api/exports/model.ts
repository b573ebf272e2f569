import { t } from "elysia";
import { AppError } from "../../core/index.ts";
import type { ExportJob } from "../../settings/index.ts";
import { iso, timeBound } from "../openapi/schemas.ts";
import { EXPORT_FORMATS, type ExportFormat } from "./render.ts";

/**
 * Request and response shapes of the Exports tag (docs/API.md "Exports and share links").
 *
 * Export job statuses and transitions (ours; docs/API.md leaves them open):
 *
 * | From      | Trigger                                        | To        | Also                                  |
 * |-----------|------------------------------------------------|-----------|---------------------------------------|
 * | (none)    | `POST /exports` accepted                       | `queued`  | 201 with the job                      |
 * | `queued`  | a worker is free (FIFO, `EXPORT_WORKERS` at once) | `running` |                                    |
 * | `running` | file written                                   | `done`    | `bytes` set; download answers 200     |
 * | `running` | no messages, query failure, time-out, I/O error | `failed` | `error` holds the reason              |
 * | `queued` / `running` | the coordinator stopped before the end | `queued` | re-run at the next start          |
 * | any       | `EXPORT_TTL_MS` (24 h) after creation          | (deleted) | file removed; GET answers 404         |
 *
 * `done` and `failed` are final. Download of a job that is not `done` is 409 with its `status`.
 */
export type { ExportStatus } from "../../settings/index.ts";

/** Finished exports (and their files) are kept this long after creation. */
export const EXPORT_TTL_MS = 24 * 3_600_000;
/** Jobs rendered at the same time; the rest wait in FIFO order. */
export const EXPORT_WORKERS = 2;
/** Unfinished jobs one user may have; more is 429 (the queue is memory and lake time). */
export const MAX_PENDING_PER_USER = 10;

/** Share links: default and longest lifetime (spec: "persists the full request body with an expiry"). */
export const SHARE_DEFAULT_TTL_SEC = 7 * 86_400;
export const SHARE_MAX_TTL_SEC = 30 * 86_400;

const sessionFields = {
  session_id: t.Union(
    [
      t.String({ minLength: 1, maxLength: 1024 }),
      t.Array(t.String({ minLength: 1, maxLength: 1024 }), { minItems: 1, maxItems: 1000 }),
    ],
    {
      description: "Call-ID(s) of the selected transaction(s); correlated legs are added",
    },
  ),
  proto_type: t.Optional(t.Integer({ description: "HEP protocol type (default 1, SIP)" })),
  event_type: t.Optional(t.String({ maxLength: 128, description: "call (default), registration, default" })),
  timestamp: t.Optional(
    t.Object(
      {
        from: timeBound("start, epoch ms or ISO 8601 (default: to minus 7 days)"),
        to: timeBound("end, epoch ms or ISO 8601 (default now)"),
      },
      {
        additionalProperties: true,
        description: "where to look for the selected rows: epoch ms (or ISO 8601); default the last 7 days",
      },
    ),
  ),
  whitelist: t.Optional(
    t.Array(t.String({ maxLength: 128 }), {
      maxItems: 1000,
      description: "addresses or CIDRs to EXCLUDE (despite the name; docs/API.md, Exports and share links)",
    }),
  ),
  use_default_exclusions: t.Optional(
    t.Boolean({
      description: "also exclude the enabled entries of the user's export.transaction excludedCIDR (default true)",
    }),
  ),
};

export const SessionExportBody = t.Object(sessionFields, { additionalProperties: true });
export type SessionExportRequest = typeof SessionExportBody.static;

export const ExportJobBody = t.Object(
  {
    ...sessionFields,
    format: t.String({ pattern: "^([Pp][Cc][Aa][Pp]|[Tt][Ee][Xx][Tt])$", description: "pcap or text (any case)" }),
  },
  { additionalProperties: true },
);

export const ShareLinkBody = t.Object(
  {
    ...sessionFields,
    expires_in_sec: t.Optional(
      t.Integer({
        minimum: 1,
        maximum: SHARE_MAX_TTL_SEC,
        description: "link lifetime in seconds (default 7 days, at most 30 days)",
      }),
    ),
  },
  { additionalProperties: true },
);

export function parseFormat(v: string): ExportFormat {
  const f = v.trim().toLowerCase();
  const found = EXPORT_FORMATS.find((x) => x === f);
  if (!found)
    throw new AppError("VALIDATION", `format: expected one of ${EXPORT_FORMATS.join(", ")}`, {
      details: { fields: ["format"] },
    });
  return found;
}

/**
 * What a job or share link runs, frozen when it was requested (JSON in the settings database):
 * the exclusions are already resolved, so the result does not change with later settings edits.
 */
export interface ResolvedExport {
  session_ids: string[];
  proto_type: number;
  event_type: string;
  from_ms?: number;
  to_ms?: number;
  exclude: string[];
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isOptNumber = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v));

/** Reads a stored ResolvedExport back; undefined when the row holds something else. */
export function asResolvedExport(v: unknown): ResolvedExport | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (!isStringArray(o.session_ids) || o.session_ids.length === 0 || !isStringArray(o.exclude)) return undefined;
  if (
    typeof o.proto_type !== "number" ||
    typeof o.event_type !== "string" ||
    !isOptNumber(o.from_ms) ||
    !isOptNumber(o.to_ms)
  )
    return undefined;
  return {
    session_ids: o.session_ids,
    proto_type: o.proto_type,
    event_type: o.event_type,
    ...(o.from_ms === undefined ? {} : { from_ms: o.from_ms as number }),
    ...(o.to_ms === undefined ? {} : { to_ms: o.to_ms as number }),
    exclude: o.exclude,
  };
}

export const ExportJobView = t.Object({
  id: t.String(),
  status: t.Union([t.Literal("queued"), t.Literal("running"), t.Literal("done"), t.Literal("failed")]),
  format: t.String(),
  created_at: t.String({ description: "ISO 8601" }),
  updated_at: t.String({ description: "ISO 8601" }),
  expires_at: t.String({ description: "ISO 8601: the job and its file are deleted then" }),
  bytes: t.Integer(),
  error: t.Union([t.String(), t.Null()]),
  download_url: t.Union([t.String(), t.Null()], { description: "set when status is done" }),
  partial: t.Union([t.String(), t.Null()], {
    description:
      'with coordinator.nodes: the nodes whose messages the file misses, with why ("dead failed (reason); slow timed out"); null when every node answered',
  }),
});

export function jobView(j: ExportJob, v4Path: string): typeof ExportJobView.static {
  return {
    id: j.id,
    status: j.status,
    format: j.format,
    created_at: iso(j.createdAt),
    updated_at: iso(j.updatedAt),
    expires_at: iso(j.createdAt + EXPORT_TTL_MS),
    bytes: j.bytes,
    error: j.error === "" ? null : j.error,
    download_url: j.status === "done" ? `${v4Path}/exports/${j.id}/download` : null,
    partial: j.partial === "" ? null : j.partial,
  };
}
