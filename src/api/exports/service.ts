import { sha256Hex } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import { validateExportTransaction, type ExcludedAddress, type SettingsStore } from "../../settings/index.ts";
import type { TransactionService } from "../search/index.ts";
import { exclusionMatcher, resolveExclusions, withoutExcluded } from "./exclusions.ts";
import { windowMs } from "../openapi/schemas.ts";
import { SHARE_DEFAULT_TTL_SEC, asResolvedExport, type ResolvedExport, type SessionExportRequest } from "./model.ts";
import { CONTENT_TYPE, exportFileName, renderPcap, renderText, type ExportFormat } from "./render.ts";

export interface ExportFile {
  bytes: Uint8Array;
  fileName: string;
  contentType: string;
  messages: number;
  /** Over coordinator.nodes: the nodes that failed or timed out, named, with why (their messages are missing). */
  partial?: string;
  /** The same, names only: what a public share download says (no internal error text). */
  partialNames?: string;
}

/** `b failed (connection refused); c timed out` of a call view's meta.nodes, when it is partial. */
export function partialNodes(
  call: { nodes?: ReadonlyArray<{ name: string; status: string; error?: string }>; partial?: boolean },
  withErrors = true,
): string | undefined {
  if (!call.partial) return undefined;
  const missing = (call.nodes ?? []).filter((n) => n.status === "failed" || n.status === "timeout");
  return (
    missing
      .map(
        (n) =>
          `${n.name} ${n.status === "timeout" ? "timed out" : "failed"}${withErrors && n.error ? ` (${n.error})` : ""}`,
      )
      .join("; ") || "a node did not answer"
  );
}

/** Epoch ms as a number or digits, or an ISO 8601 time; 400 naming the field otherwise. */
function epochMs(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  const n =
    typeof v === "number"
      ? v
      : typeof v === "string"
        ? /^\s*-?\d+\s*$/.test(v)
          ? Number(v)
          : Date.parse(v)
        : Number.NaN;
  if (Number.isFinite(n)) return windowMs(n);
  throw new AppError("VALIDATION", `${field}: expected epoch milliseconds or an ISO 8601 time`, {
    details: { fields: [field] },
  });
}

/** Share tokens: 256 random bits, base64url; only their SHA-256 is stored (as the share_links id). */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
export const shareTokenHash = (token: string): string | undefined =>
  TOKEN_RE.test(token) ? sha256Hex(token) : undefined;

/**
 * Transaction exports: what to export (the call view of TransactionService, minus excluded
 * addresses, see exclusions.ts) and how (render.ts), for the direct download, the job queue and
 * the share links.
 */
export class ExportService {
  constructor(
    private readonly transactions: TransactionService,
    private readonly settings: SettingsStore,
  ) {}

  /** Validates the request and freezes its exclusions (whitelist + the user's enabled defaults). */
  resolve(body: SessionExportRequest, username: string): ResolvedExport {
    const ids = (Array.isArray(body.session_id) ? body.session_id : [body.session_id])
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (ids.length === 0)
      throw new AppError("VALIDATION", "session_id is required", { details: { fields: ["session_id"] } });
    const fromMs = epochMs(body.timestamp?.from, "timestamp.from");
    const toMs = epochMs(body.timestamp?.to, "timestamp.to");
    if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) {
      throw new AppError("VALIDATION", "timestamp.from is after timestamp.to", {
        details: { fields: ["timestamp.from"] },
      });
    }
    const protoType = body.proto_type ?? 1;
    const exclude = resolveExclusions({
      whitelist: body.whitelist ?? [],
      useDefaults: body.use_default_exclusions !== false,
      defaults: this.defaultExclusions(username),
      aliasAddresses: (name) => this.aliasAddresses(name),
    });
    return {
      session_ids: ids,
      proto_type: protoType,
      event_type: body.event_type ?? (protoType === 1 ? "call" : "default"),
      ...(fromMs === undefined ? {} : { from_ms: fromMs }),
      ...(toMs === undefined ? {} : { to_ms: toMs }),
      exclude,
    };
  }

  /** The file for a resolved request; the transaction window uses `username`'s range setting. */
  async render(req: ResolvedExport, username: string, format: ExportFormat): Promise<ExportFile> {
    const call = await this.transactions.messages({
      sessionIds: req.session_ids,
      protoType: req.proto_type,
      eventType: req.event_type,
      ...(req.from_ms === undefined ? {} : { fromMs: req.from_ms }),
      ...(req.to_ms === undefined ? {} : { toMs: req.to_ms }),
      excludeIps: [],
      username,
    });
    const items = withoutExcluded(call.items, exclusionMatcher(req.exclude));
    const bytes = format === "pcap" ? renderPcap(items) : new TextEncoder().encode(renderText(items, call.sessions));
    const firstUs = typeof items[0]?.timestamp_us === "number" ? items[0].timestamp_us : undefined;
    const partial = partialNodes(call);
    const file = {
      bytes,
      fileName: exportFileName(req.session_ids, firstUs, format),
      contentType: CONTENT_TYPE[format],
      messages: items.length,
    };
    return partial ? { ...file, partial, partialNames: partialNodes(call, false)! } : file;
  }

  /**
   * Persists the full request body and its resolved form; returns the bearer token (shown once).
   * The link dies with its expiry, or when its creator is deleted or disabled.
   */
  createShareLink(
    body: SessionExportRequest & { expires_in_sec?: number },
    username: string,
    nowMs = Date.now(),
  ): { token: string; expiresAt: number } {
    const resolved = this.resolve(body, username);
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const token = Buffer.from(bytes).toString("base64url");
    const expiresAt = nowMs + (body.expires_in_sec ?? SHARE_DEFAULT_TTL_SEC) * 1000;
    this.settings.shareLinks.create(username, { request: body, resolved }, expiresAt, sha256Hex(token));
    return { token, expiresAt };
  }

  /** Public download: 404 for a malformed, unknown or expired token, or a creator no longer active. */
  async shareDownload(token: string, format: ExportFormat): Promise<ExportFile> {
    const hash = shareTokenHash(token);
    const link = hash === undefined ? undefined : this.settings.shareLinks.get(hash);
    const owner = link ? this.settings.users.getByUsername(link.username) : undefined;
    const resolved = link ? asResolvedExport(link.request.resolved) : undefined;
    if (!link || !owner?.isActive || !resolved) throw new AppError("NOT_FOUND", "unknown or expired share link");
    return await this.render(resolved, link.username, format);
  }

  private defaultExclusions(username: string): ExcludedAddress[] {
    const s = this.settings.userSettings
      .list(username)
      .find((x) => x.category === "export" && x.param === "transaction");
    if (!s) return [];
    try {
      return validateExportTransaction(s.data).excludedCIDR;
    } catch {
      return []; // stored through the validated PUT; a row written by an older build is ignored
    }
  }

  /** Address texts of every active alias row named `name` (case-insensitive). */
  private aliasAddresses(name: string): string[] {
    const out: string[] = [];
    const want = name.trim().toLowerCase();
    let cursor: string | undefined;
    for (let i = 0; i < 100; i++) {
      const page = this.settings.aliases.list(
        { active: true },
        { limit: 1000, search: name.trim(), ...(cursor ? { cursor } : {}) },
      );
      for (const a of page.items) if (a.name.toLowerCase() === want) out.push(a.ip);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    return out;
  }
}
