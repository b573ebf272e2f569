import { chmodSync, existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The JWT cache of `svc search` (docs/CLI.md "Authentication"): `~/.svc_token`, mode 0600, one
 * entry per coordinator URL so a token is only ever sent to the server that issued it. Expired
 * entries are not offered. A broken file is treated as empty (and rewritten on the next login).
 */
export interface CachedToken {
  user: string;
  token: string;
  /** ISO time from the login answer; empty when unknown. */
  expires_at: string;
}

type CacheFile = Record<string, CachedToken>;

export const tokenCachePath = (env: Record<string, string | undefined>) => join(env.HOME || homedir(), ".svc_token");

/** Tokens within this margin of expiry are not reused: the search itself would hit the 401. */
const EXPIRY_MARGIN_MS = 30_000;

export class TokenCache {
  constructor(readonly path: string) {}

  private read(): CacheFile {
    if (!existsSync(this.path)) return {};
    try {
      const j: unknown = JSON.parse(readFileSync(this.path, "utf8"));
      if (!j || typeof j !== "object" || Array.isArray(j)) return {};
      const out: CacheFile = {};
      for (const [k, v] of Object.entries(j as Record<string, unknown>)) {
        const e = v as Partial<CachedToken> | null;
        if (e && typeof e.token === "string" && e.token !== "")
          out[k] = { user: String(e.user ?? ""), token: e.token, expires_at: String(e.expires_at ?? "") };
      }
      return out;
    } catch {
      return {};
    }
  }

  /** Writes through a temp file created 0600, so the token is never readable by others, not even briefly. */
  private write(data: CacheFile): void {
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }

  /** A usable token for `base` (and `user` when given), or undefined. */
  get(base: string, user: string | undefined, nowMs = Date.now()): CachedToken | undefined {
    const e = this.read()[base];
    if (!e) return undefined;
    if (user !== undefined && user !== "" && e.user !== user) return undefined;
    const exp = Date.parse(e.expires_at);
    if (!Number.isNaN(exp) && exp - EXPIRY_MARGIN_MS <= nowMs) return undefined;
    return e;
  }

  set(base: string, entry: CachedToken): void {
    this.write({ ...this.read(), [base]: entry });
  }

  delete(base: string): void {
    const data = this.read();
    if (!(base in data)) return;
    delete data[base];
    if (Object.keys(data).length === 0) {
      try {
        unlinkSync(this.path);
      } catch {
        // already gone
      }
    } else this.write(data);
  }
}
