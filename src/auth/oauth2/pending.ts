/**
 * In-process stores of the OAuth flow (docs/AUTH.md "OAuth 2.0"): the CSRF state with its PKCE
 * verifier and return target, and the one-time tokens of the callback redirect. Each entry has a
 * short TTL and is removed when taken, so a state or a token works once. Bounded: past `max`
 * entries the oldest is dropped (a flood of redirect requests cannot grow memory without limit).
 * This is the in-process backend; several coordinator replicas share a PostgreSQL one instead
 * (src/auth/state-store.ts, docs/AUTH.md "Several coordinators").
 */
export class OnceStore<T> {
  private readonly entries = new Map<string, { value: T; expiresMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  put(key: string, value: T, ttlMs = this.ttlMs): void {
    this.entries.set(key, { value, expiresMs: this.now() + ttlMs });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** The value once: a second take of the same key, or a take after the TTL, gives undefined. */
  take(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    return e.expiresMs > this.now() ? e.value : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
