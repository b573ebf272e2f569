import { Elysia } from "elysia";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../config/index.ts";
import { AppError, type MetricsRegistry } from "../../core/index.ts";
import type { HepPipeline } from "../../ingest/index.ts";
import { type Lake, lakeStateDir } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { noLakeError } from "../search/no-lake.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { BOOL_FIELD_VALUES, TABLE_FIELD_VALUES, parseBoolField, parseForceTable } from "./form.ts";
import { multipartBoundary } from "./multipart.ts";
import { ImportResponseSchema } from "./schema.ts";
import { importCapture } from "./service.ts";
import { spoolUpload } from "./upload.ts";

export { capturedToPacket, importCapture, type ImportDeps, type ImportOptions } from "./service.ts";
export type { ImportReport } from "./schema.ts";
export { parseBoolField, parseForceTable, type SipTableChoice } from "./form.ts";

export interface ImportRouteDeps {
  /** Undefined on a coordinator without a lake: the route answers 503 (an import writes into a lake of its own). */
  lake: Lake | undefined;
  config: Config;
  /** The HEP pipeline; absent when ingest.hep.enable is false (the route then answers 503). */
  pipeline?: HepPipeline;
  metrics?: MetricsRegistry;
}

/**
 * The Imports tag: `POST /imports/pcap` (multipart/form-data: `file`, `override_to_current_time`,
 * `force_sip_table` / `force_table`) → 201 `{data: ImportReport, message}` once every message is
 * stored and searchable. The body cap is coordinator.http_server.max_body_bytes (the HTTP server
 * answers 413 above it; checked here again for in-process callers). The upload is streamed to a
 * spool file and parsed from a read-only mapping of it, in slices (service.ts).
 */
export function importRoutes(deps: ImportRouteDeps) {
  const maxBytes = deps.config.coordinator.http_server.max_body_bytes;
  const framesParsed = deps.metrics?.counter(
    "svc_pcap_import_frames_total",
    "Packet records parsed by PCAP imports (POST /imports/pcap), counted slice by slice as the parse goes.",
  );
  // Uploads are spooled in the state directory (beside the catalog), never in TMPDIR (often a
  // tmpfs, so memory again); what a crash left behind is removed here.
  const spoolDir = join(lakeStateDir(deps.config.storage.lakehouse), "import-spool");
  if (deps.lake) rmSync(spoolDir, { recursive: true, force: true });
  // A slot is taken before the upload is read, so slow uploads count too.
  const maxConcurrent = deps.config.coordinator.imports.max_concurrent;
  let running = 0;
  return new Elysia({ name: "svc-imports" }).use(authContext).post(
    "/imports/pcap",
    async ({ request, set }) => {
      const lake = deps.lake;
      if (!lake) throw noLakeError("PCAP import");
      if (!deps.pipeline)
        throw new AppError(
          "UNAVAILABLE",
          "PCAP import needs the HEP pipeline (ingest.hep.enable is false on this coordinator)",
        );
      const boundary = multipartBoundary(request.headers.get("content-type") ?? "");
      if (boundary === null || request.body === null) {
        throw new AppError(
          "VALIDATION",
          "file: required; send multipart/form-data with the capture in the field `file`",
          { details: { fields: ["file"] } },
        );
      }
      if (running >= maxConcurrent) {
        throw new AppError(
          "RATE_LIMITED",
          `${running} imports are running, the most coordinator.imports.max_concurrent allows; retry when one has finished`,
        );
      }
      running++;
      const path = join(spoolDir, `${crypto.randomUUID()}.pcap`);
      try {
        mkdirSync(spoolDir, { recursive: true });
        const upload = await spoolUpload(request.body, boundary, path, maxBytes);
        if (upload.file === null)
          throw new AppError(
            "VALIDATION",
            "file: required; send multipart/form-data with the capture in the field `file`",
            { details: { fields: ["file"] } },
          );
        const form = upload.fields;
        const forceSipTable = parseForceTable(form.force_sip_table, form.force_table);
        const overrideToCurrentTime = parseBoolField(form.override_to_current_time, "override_to_current_time");
        const fileName = upload.file.name;
        // Mapped, not read: the pages are the file's, the kernel may drop and re-read them. The
        // mapping outlives the unlink; it goes when the last view into it is collected.
        const bytes = upload.file.bytes === 0 ? new Uint8Array(0) : Bun.mmap(path, { shared: false });
        rmSync(path, { force: true });
        const report = await importCapture(
          bytes,
          { fileName, overrideToCurrentTime, ...(forceSipTable ? { forceSipTable } : {}) },
          {
            pipeline: deps.pipeline,
            lake,
            maxBufferedRows: deps.config.storage.lakehouse.max_buffered_rows,
            retentionDays: deps.config.storage.lakehouse.retention.days,
            maxRecords: deps.config.coordinator.imports.max_records,
            ...(framesParsed ? { framesParsed } : {}),
          },
        );
        set.status = 201;
        return {
          data: report,
          message: `imported ${report.imported} of ${report.sip_messages} SIP messages from ${fileName}`,
        };
      } finally {
        running--;
        rmSync(path, { force: true });
      }
    },
    {
      // The body is read as a stream by spoolUpload, not parsed into a FormData in memory.
      parse: "none",
      detail: {
        tags: ["Imports"],
        summary:
          "Import a pcap/pcapng (multipart: file, override_to_current_time, force_sip_table | force_table); synchronous, searchable on return",
        // Read by spoolUpload, not by an Elysia schema: the document states it here. force_table,
        // the alias of force_sip_table (a conflicting pair is a 400), is left out.
        requestBody: {
          required: true,
          content: {
            "multipart/form-data": {
              schema: {
                type: "object",
                required: ["file"],
                properties: {
                  file: {
                    type: "string",
                    format: "binary",
                    description: "the capture: pcap or pcapng (anything else is a 400)",
                  },
                  override_to_current_time: {
                    type: "string",
                    enum: [...BOOL_FIELD_VALUES],
                    description: "shift the capture's times to now (default false)",
                  },
                  force_sip_table: {
                    type: "string",
                    enum: [...TABLE_FIELD_VALUES],
                    description: "store every SIP message in this table",
                  },
                },
              },
            },
          },
        },
      },
      response: { 201: ImportResponseSchema, ...errors(400, 401, 429), 413: ErrorResponse },
    },
  );
}
