/**
 * Events per key in a sliding window (docs/GAMES.md "NetChess": the `hello` limits). A key's list
 * holds at most `burst` times, so memory stays bounded by the keys the caller keeps.
 */
export class WindowLimit {
  private readonly times = new Map<string, number[]>();

  constructor(
    readonly burst: number,
    readonly windowMs: number,
  ) {}

  /** True, and counted, when one more event of `key` at `now` stays within `burst` per window. */
  take(key: string, now: number): boolean {
    const recent = (this.times.get(key) ?? []).filter((t) => now - t < this.windowMs);
    const allowed = recent.length < this.burst;
    if (allowed) recent.push(now);
    this.times.set(key, recent);
    return allowed;
  }

  forget(key: string): void {
    this.times.delete(key);
  }
}
