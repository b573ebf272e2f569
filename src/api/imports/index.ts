import { Elysia } from "elysia";
import type { Config } from "../../config/index.ts";
import { AppError, type MetricsRegistry } from "../../core/index.ts";
import type { HepPipeline } from "../../ingest/index.ts";
import type { Lake } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { parseBoolField, parseForceTable } from "./form.ts";
import { importCapture } from "./service.ts";

export { capturedToPacket, importCapture, type ImportDeps, type ImportOptions, type ImportReport } from "./service.ts";
export { parseBoolField, parseForceTable, type SipTableChoice } from "./form.ts";

export interface ImportRouteDeps {
  lake: Lake;
  config: Config;
  /** The HEP pipeline; absent when ingest.hep.enable is false (the route then answers 503). */
  pipeline?: HepPipeline;
  metrics?: MetricsRegistry;
}

/**
 * The Imports tag: `POST /imports/pcap` (multipart/form-data: `file`, `override_to_current_time`,
 * `force_sip_table` / `force_table`) → 201 `{data: ImportReport, message}` once every message is
 * stored and searchable. The body cap is coordinator.http_server.max_body_bytes (the HTTP server
 * answers 413 above it; checked here again for in-process callers).
 */
export function importRoutes(deps: ImportRouteDeps) {
  const maxBytes = deps.config.coordinator.http_server.max_body_bytes;
  const framesParsed = deps.metrics?.counter("svc_pcap_import_frames_total", "Packet records parsed by PCAP imports (POST /imports/pcap), counted slice by slice as the parse goes.");
  return new Elysia({ name: "svc-imports" }).use(authContext).post(
    "/imports/pcap",
    async ({ body, request, set }) => {
      if (!deps.pipeline) throw new AppError("UNAVAILABLE", "PCAP import needs the HEP pipeline (ingest.hep.enable is false on this coordinator)");
      const type = request.headers.get("content-type") ?? "";
      const form = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
      const file = form.file;
      if (!type.toLowerCase().startsWith("multipart/form-data") || !(file instanceof Blob)) {
        throw new AppError("VALIDATION", "file: required; send multipart/form-data with the capture in the field `file`", { details: { fields: ["file"] } });
      }
      if (file.size > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `file: ${file.size} bytes is above coordinator.http_server.max_body_bytes (${maxBytes})`);
      const forceSipTable = parseForceTable(form.force_sip_table, form.force_table);
      const overrideToCurrentTime = parseBoolField(form.override_to_current_time, "override_to_current_time");
      const fileName = file instanceof File && file.name ? file.name : "upload.pcap";
      const report = await importCapture(
        new Uint8Array(await file.arrayBuffer()),
        { fileName, overrideToCurrentTime, ...(forceSipTable ? { forceSipTable } : {}) },
        {
          pipeline: deps.pipeline,
          lake: deps.lake,
          maxBufferedRows: deps.config.storage.lakehouse.max_buffered_rows,
          retentionDays: deps.config.storage.lakehouse.retention.days,
          maxRecords: deps.config.coordinator.imports.max_records,
          ...(framesParsed ? { framesParsed } : {}),
        },
      );
      set.status = 201;
      return { data: report, message: `imported ${report.imported} of ${report.sip_messages} SIP messages from ${fileName}` };
    },
    {
      detail: {
        tags: ["Imports"],
        summary: "Import a pcap/pcapng (multipart: file, override_to_current_time, force_sip_table | force_table); synchronous, searchable on return",
      },
      response: { ...errors(400, 401), 413: ErrorResponse },
    },
  );
}
