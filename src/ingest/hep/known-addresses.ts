/**
 * Source addresses that completed a valid HEP frame recently (docs/ARCHITECTURE.md "HEP stream
 * connections"): the stream listeners keep slots for them and may close a connection that never
 * sent a valid frame to let one of them in. Bounded in count (least recently used forgotten first)
 * and in age, so a flood of addresses cannot grow it and an address is not trusted for ever.
 */
/** What the stream listeners ask of the known addresses: this file's map, or shared-known.ts's table over several threads. */
export interface KnownAddressBook {
  remember(ip: string, nowMs: number): void;
  has(ip: string, nowMs: number): boolean;
  readonly size: number;
}

export class KnownAddresses implements KnownAddressBook {
  /** Address → when it last completed a valid frame (ms); Map order is least recently used first. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  /** `ip` completed a valid frame at `nowMs`. Called once per read, not per frame. */
  remember(ip: string, nowMs: number): void {
    this.seen.delete(ip);
    this.seen.set(ip, nowMs);
    if (this.seen.size > this.maxEntries) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
  }

  /** Whether `ip` completed a valid frame within the last `ttlMs`. */
  has(ip: string, nowMs: number): boolean {
    const at = this.seen.get(ip);
    if (at === undefined) return false;
    if (nowMs - at <= this.ttlMs) return true;
    this.seen.delete(ip);
    return false;
  }

  get size(): number {
    return this.seen.size;
  }
}
