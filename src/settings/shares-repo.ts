import { newId, nowMs, parseJsonColumn, type SettingsDb } from "./db.ts";

/**
 * Share links (docs/API.md "Exports and share links": the whole request body is persisted and the public downloads
 * honour it) and export jobs (`/exports`). The search issue fills in their use; this is storage.
 */
export interface ShareLink {
  id: string;
  username: string;
  request: Record<string, unknown>;
  createdAt: number;
  expiresAt: number | null;
}

export type ExportStatus = "queued" | "running" | "done" | "failed";

export interface ExportJob {
  id: string;
  username: string;
  format: string;
  request: Record<string, unknown>;
  status: ExportStatus;
  error: string;
  filePath: string;
  bytes: number;
  /** The nodes a finished job's file misses (`dead failed (reason); slow timed out`); '' when none. */
  partial: string;
  createdAt: number;
  updatedAt: number;
}

interface ShareRow {
  id: string;
  username: string;
  request: string;
  created_at: number;
  expires_at: number | null;
}

interface ExportRow {
  id: string;
  username: string;
  format: string;
  request: string;
  status: string;
  error: string;
  file_path: string;
  bytes: number;
  partial: string;
  created_at: number;
  updated_at: number;
}

const toExport = (r: ExportRow): ExportJob => ({
  id: r.id,
  username: r.username,
  format: r.format,
  request: parseJsonColumn<Record<string, unknown>>(r.request, {}),
  status: r.status as ExportStatus,
  error: r.error,
  filePath: r.file_path,
  bytes: r.bytes,
  partial: r.partial,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class ShareLinksRepo {
  constructor(private readonly h: SettingsDb) {}

  /** `id` defaults to a new id; the export API passes the SHA-256 of its bearer token instead. */
  create(username: string, request: Record<string, unknown>, expiresAt: number | null, id = newId()): ShareLink {
    const now = nowMs();
    this.h.db
      .query(
        "INSERT INTO share_links (id, username, request, created_at, expires_at) VALUES ($id, $username, $request, $now, $expires)",
      )
      .run({ id, username, request: JSON.stringify(request), now, expires: expiresAt });
    return { id, username, request, createdAt: now, expiresAt };
  }

  /** An expired link reads as absent. */
  get(id: string, now = nowMs()): ShareLink | undefined {
    const r = this.h.db
      .query("SELECT * FROM share_links WHERE id = $id AND (expires_at IS NULL OR expires_at > $now)")
      .get({ id, now }) as ShareRow | null;
    return r
      ? {
          id: r.id,
          username: r.username,
          request: parseJsonColumn<Record<string, unknown>>(r.request, {}),
          createdAt: r.created_at,
          expiresAt: r.expires_at,
        }
      : undefined;
  }

  deleteExpired(now = nowMs()): number {
    return this.h.db.query("DELETE FROM share_links WHERE expires_at IS NOT NULL AND expires_at <= $now").run({ now })
      .changes;
  }
}

export class ExportJobsRepo {
  constructor(private readonly h: SettingsDb) {}

  create(username: string, format: string, request: Record<string, unknown>): ExportJob {
    const id = newId();
    const now = nowMs();
    this.h.db
      .query(
        "INSERT INTO export_jobs (id, username, format, request, status, created_at, updated_at) VALUES ($id, $username, $format, $request, 'queued', $now, $now)",
      )
      .run({ id, username, format, request: JSON.stringify(request), now });
    return this.get(id)!;
  }

  get(id: string): ExportJob | undefined {
    const r = this.h.db.query("SELECT * FROM export_jobs WHERE id = $id").get({ id }) as ExportRow | null;
    return r ? toExport(r) : undefined;
  }

  setStatus(
    id: string,
    status: ExportStatus,
    extra: { error?: string; filePath?: string; bytes?: number; partial?: string } = {},
  ): void {
    this.h.db
      .query(
        `UPDATE export_jobs SET status = $status, error = COALESCE($error, error), file_path = COALESCE($path, file_path),
           bytes = COALESCE($bytes, bytes), partial = COALESCE($partial, partial), updated_at = $now WHERE id = $id`,
      )
      .run({
        id,
        status,
        error: extra.error ?? null,
        path: extra.filePath ?? null,
        bytes: extra.bytes ?? null,
        partial: extra.partial ?? null,
        now: nowMs(),
      });
  }

  /** Jobs in any of `statuses`, oldest first (queued or running ones left by a stopped process). */
  listByStatus(statuses: readonly ExportStatus[]): ExportJob[] {
    if (statuses.length === 0) return [];
    const ph = statuses.map((_s, i) => `$s${i}`).join(", ");
    const params = Object.fromEntries(statuses.map((st, i) => [`s${i}`, st]));
    return (
      this.h.db
        .query(`SELECT * FROM export_jobs WHERE status IN (${ph}) ORDER BY created_at, id`)
        .all(params) as ExportRow[]
    ).map(toExport);
  }

  /** Jobs older than `olderThanMs`, for the caller to delete their files before `delete`. */
  listOlderThan(olderThanMs: number, now = nowMs()): ExportJob[] {
    return (
      this.h.db
        .query("SELECT * FROM export_jobs WHERE created_at < $cut")
        .all({ cut: now - olderThanMs }) as ExportRow[]
    ).map(toExport);
  }

  delete(id: string): boolean {
    return this.h.db.query("DELETE FROM export_jobs WHERE id = $id").run({ id }).changes > 0;
  }
}
