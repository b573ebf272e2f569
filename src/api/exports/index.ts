import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { Elysia, t } from "elysia";
import type { Config } from "../../config/index.ts";
import { AppError, type Logger } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { authContext, v4Base } from "../auth/guard.ts";
import { dataResponse, ErrorResponse, errors, idString } from "../openapi/schemas.ts";
import { searchServices, type OverNodes } from "../search/index.ts";
import { ExportJobRunner } from "./jobs.ts";
import {
  ExportJobBody,
  ExportJobView,
  SessionExportBody,
  ShareLinkBody,
  asResolvedExport,
  jobView,
  parseFormat,
} from "./model.ts";
import { CONTENT_TYPE, exportFileName, type ExportFormat } from "./render.ts";
import { ExportService, type ExportFile } from "./service.ts";

export { ExportJobRunner } from "./jobs.ts";
export { ExportService, shareTokenHash } from "./service.ts";
export { exclusionMatcher, resolveExclusions, withoutExcluded } from "./exclusions.ts";
export { renderPcap, renderText, type ExportFormat } from "./render.ts";

export interface ExportDeps {
  /** Undefined on a coordinator without a lake: the call view comes from `overNodes`. */
  lake: Lake | undefined;
  settings: SettingsStore;
  config: Config;
  logger: Logger;
  /** coordinator.nodes: the call's messages come from every node (docs/ARCHITECTURE.md "Reads over several nodes"). */
  overNodes?: OverNodes;
  /** Test hook: the job TTL (default 24 h). */
  ttlMs?: number;
}

/** Exports live in `exports/` beside the settings database (an in-memory database uses the temp dir). */
export function exportsDir(settingsDbPath: string): string {
  return settingsDbPath === ":memory:"
    ? join(tmpdir(), `svc-exports-${process.pid}`)
    : join(dirname(settingsDbPath), "exports");
}

/** A view over the same memory typed for Response (no copy unless the bytes sit in a SharedArrayBuffer). */
const bodyOf = (b: Uint8Array): Uint8Array<ArrayBuffer> =>
  b.buffer instanceof ArrayBuffer ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : b.slice();

/** A header value: printable ASCII on one line, at most 1 000 characters. */
const headerText = (s: string) => s.replace(/[^\x20-\x7e]/g, "?").slice(0, 1000);

const attachment = (f: { bytes: Uint8Array; fileName: string; partial?: string }, contentType: string) =>
  new Response(bodyOf(f.bytes), {
    headers: {
      "content-type": contentType,
      "content-disposition": `attachment; filename="${f.fileName}"`,
      "content-length": String(f.bytes.length),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // A file has no meta: a partial export over coordinator.nodes names the missing nodes here.
      ...(f.partial ? { "x-svc-partial": headerText(f.partial) } : {}),
    },
  });

const fileResponse = (f: ExportFile) => attachment(f, f.contentType);

/**
 * The Exports tag and the transaction export operations (docs/API.md "Exports and share links"):
 *  - POST /transactions/export/pcap | /transactions/export/text → the file, at once;
 *  - POST /transactions/export/link → a share link (201): `{token, pcap_url, text_url, expires_at}`;
 *  - GET  /share/{token}/pcap | /share/{token}/text → OPEN (no login; guard.ts OPEN_ROUTES), the
 *    persisted request with its frozen exclusions; 404 when unknown or expired;
 *  - POST /exports → 201 job; GET /exports/{id} → status; GET /exports/{id}/download → the file
 *    (404 unknown or another user's, 409 not done).
 * `plugins` go under the v4 prefix; `module` runs the job queue (start after the settings database).
 */
export function exportRoutes(deps: ExportDeps) {
  const { transactions } = searchServices(deps);
  const service = new ExportService(transactions, deps.settings);
  const base = v4Base(deps.config.coordinator);
  const runner = new ExportJobRunner({
    jobs: deps.settings.exportJobs,
    shareLinks: deps.settings.shareLinks,
    dir: exportsDir(deps.config.coordinator.settings_db_path),
    logger: deps.logger.child({ module: "exports" }),
    ...(deps.ttlMs === undefined ? {} : { ttlMs: deps.ttlMs }),
    produce: async (job) => {
      const req = asResolvedExport(job.request);
      if (!req) throw new AppError("VALIDATION", "the stored export request is not readable");
      const f = await service.render(req, job.username, parseFormat(job.format));
      return { bytes: f.bytes, partial: f.partial };
    },
  });

  const authed = new Elysia({ name: "svc-exports" })
    .use(authContext)
    .post(
      "/transactions/export/pcap",
      async ({ body, auth }) =>
        fileResponse(await service.render(service.resolve(body, auth.username), auth.username, "pcap")),
      {
        body: SessionExportBody,
        detail: {
          tags: ["Transactions"],
          summary: "The call (with correlated legs) as a PCAP: Ethernet + IP + UDP + SIP per message, original times",
        },
        response: { ...errors(400, 401, 404), 413: ErrorResponse },
      },
    )
    .post(
      "/transactions/export/text",
      async ({ body, auth }) =>
        fileResponse(await service.render(service.resolve(body, auth.username), auth.username, "text")),
      {
        body: SessionExportBody,
        detail: {
          tags: ["Transactions"],
          summary: "The call as human-readable text: time, source → destination (ports, aliases), SIP text",
        },
        response: { ...errors(400, 401, 404), 413: ErrorResponse },
      },
    )
    .post(
      "/transactions/export/link",
      async ({ body, auth, request, set }) => {
        // Checked now so a link never points at nothing (404 like the direct export).
        await service.render(service.resolve(body, auth.username), auth.username, "text");
        const { token, expiresAt } = service.createShareLink(body, auth.username);
        const origin = new URL(request.url).origin;
        set.status = 201;
        return {
          data: {
            token,
            pcap_url: `${origin}${base}/share/${token}/pcap`,
            text_url: `${origin}${base}/share/${token}/text`,
            expires_at: new Date(expiresAt).toISOString(),
          },
          message: "share link created; anyone with it can download until it expires",
        };
      },
      {
        body: ShareLinkBody,
        detail: {
          tags: ["Transactions"],
          summary:
            "Share link: the request is stored with an expiry (default 7 days, expires_in_sec ≤ 30 days); public PCAP/text downloads honour it",
        },
        response: {
          201: t.Object({
            data: t.Object({ token: t.String(), pcap_url: t.String(), text_url: t.String(), expires_at: t.String() }),
            message: t.String(),
          }),
          ...errors(400, 401, 404),
        },
      },
    )
    .post(
      "/exports",
      ({ body, auth, set }) => {
        const format = parseFormat(body.format);
        const job = runner.submit(auth.username, format, { ...service.resolve(body, auth.username) });
        set.status = 201;
        return { data: jobView(job, base) };
      },
      {
        body: ExportJobBody,
        detail: {
          tags: ["Exports"],
          summary: "Queue an export (format pcap or text) of a transaction; poll GET /exports/{id}",
        },
        response: { 201: dataResponse(ExportJobView), ...errors(400, 401, 429) },
      },
    )
    .get(
      "/exports/:exportId",
      ({ params, auth }) => ({ data: jobView(runner.jobOf(params.exportId, auth.username), base) }),
      {
        params: t.Object({ exportId: idString() }),
        detail: { tags: ["Exports"], summary: "Export job status: queued → running → done | failed" },
        response: { 200: dataResponse(ExportJobView), ...errors(401, 404) },
      },
    )
    .get(
      "/exports/:exportId/download",
      ({ params, auth }) => {
        const job = runner.jobOf(params.exportId, auth.username);
        if (job.status !== "done")
          throw new AppError("CONFLICT", `export ${job.id} is ${job.status}${job.error ? `: ${job.error}` : ""}`, {
            details: { status: job.status },
          });
        if (!job.filePath || !existsSync(job.filePath))
          throw new AppError("NOT_FOUND", `the file of export ${job.id} is gone`);
        const format: ExportFormat = job.format === "pcap" ? "pcap" : "text";
        const req = asResolvedExport(job.request);
        const fileName = exportFileName(req?.session_ids ?? [job.id], undefined, format);
        return new Response(Bun.file(job.filePath), {
          headers: {
            "content-type": "application/octet-stream",
            "content-disposition": `attachment; filename="${fileName}"`,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            ...(job.partial ? { "x-svc-partial": headerText(job.partial) } : {}),
          },
        });
      },
      {
        params: t.Object({ exportId: idString() }),
        detail: {
          tags: ["Exports"],
          summary: "The finished export file (application/octet-stream); 409 while not done",
        },
        response: { ...errors(401, 404, 409) },
      },
    );

  // Open on purpose (guard.ts OPEN_ROUTES): the token is the credential. No authContext here.
  const share = new Elysia({ name: "svc-share" }).get(
    "/share/:token/:format",
    async ({ params }) => {
      if (params.format !== "pcap" && params.format !== "text")
        throw new AppError("NOT_FOUND", "unknown or expired share link");
      const { partial: _reasons, partialNames, ...f } = await service.shareDownload(params.token, params.format);
      // Anyone with the link downloads: the missing nodes by name, not their internal errors.
      return attachment({ ...f, ...(partialNames ? { partial: partialNames } : {}) }, CONTENT_TYPE[params.format]);
    },
    {
      params: t.Object({
        token: t.String({ maxLength: 128 }),
        format: t.Union([t.Literal("pcap"), t.Literal("text")]),
      }),
      detail: {
        tags: ["Transactions"],
        summary: "Public download of a share link: pcap or text (no login; 404 when unknown or expired)",
        security: [],
      },
      response: { ...errors(404), 413: ErrorResponse },
    },
  );

  return { plugins: [authed, share], module: runner, service, runner };
}
