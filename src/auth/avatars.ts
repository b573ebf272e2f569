/**
 * Profile photos fetched at single-sign-on time (docs/AUTH.md "Profile photo": kept in memory for 24 hours per
 * username); the browser reads them only through `GET /me/avatar`. The OAuth flow fills it.
 */
export interface Avatar {
  bytes: Uint8Array<ArrayBuffer>;
  contentType: string;
}

const TTL_MS = 24 * 3600 * 1000;
const MAX_ENTRIES = 10_000;

export class AvatarCache {
  private readonly entries = new Map<string, Avatar & { expiresMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  set(username: string, avatar: Avatar): void {
    const key = username.toLowerCase();
    this.entries.delete(key);
    this.entries.set(key, { ...avatar, expiresMs: this.now() + TTL_MS });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get(username: string): Avatar | undefined {
    const key = username.toLowerCase();
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresMs <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return { bytes: e.bytes, contentType: e.contentType };
  }
}
