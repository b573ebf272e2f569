/**
 * Source addresses that completed a valid HEP frame recently, known to every thread's stream
 * listeners (docs/ARCHITECTURE.md "Slots over several threads"). A SharedArrayBuffer of fixed
 * size: two tables of last-seen times (ms since the epoch), each indexed by its own hash of the
 * address. `remember` writes both; an address is known when both of its entries are within the
 * time to live. Another address can only make an address look known (both of its entries
 * written by others), never make a known one forgotten.
 */
import { AppError } from "../../core/index.ts";
import type { KnownAddressBook } from "./known-addresses.ts";

const MAGIC = 0x48534b31n; // "HSK1"
const H_MAGIC = 0;
const H_BUCKETS = 1;
const H_SEED0 = 2;
const H_SEED1 = 3;
const H_TTL = 4;
const HEADER = 8;
/** An entry never written (older than any time to live). */
const NEVER = -(2n ** 62n);

export interface SharedKnownOptions {
  /** `ingest.hep.tcp.known_addresses`: the table has 8 entries per address in each hash table (rounded up to a power of two, at least 1 024). */
  knownAddresses: number;
  /** `ingest.hep.tcp.known_address_ttl_sec` in ms. */
  ttlMs: number;
  /** Entries per hash table, a power of two (instead of the size derived from knownAddresses). */
  buckets?: number;
}

/** Entries per hash table for `knownAddresses` addresses: 8 each, a power of two, at least 1 024. */
export const knownBuckets = (knownAddresses: number): number =>
  2 ** Math.ceil(Math.log2(Math.max(1024, knownAddresses * 8)));

/**
 * The shared known-address table of every thread's TCP and TLS listeners: plain data that can be
 * posted to a Worker; (8 + 2 · buckets) · 8 bytes (512 KiB at the default 4 096 addresses).
 */
export function createSharedKnown(opts: SharedKnownOptions): SharedArrayBuffer {
  const buckets = opts.buckets ?? knownBuckets(opts.knownAddresses);
  if (!Number.isInteger(buckets) || buckets <= 0 || (buckets & (buckets - 1)) !== 0)
    throw new AppError("INTERNAL", `shared known addresses: buckets must be a power of two, got ${buckets}`);
  const buf = new SharedArrayBuffer((HEADER + 2 * buckets) * 8);
  const w = new BigInt64Array(buf);
  const seeds = crypto.getRandomValues(new Uint32Array(2));
  w[H_BUCKETS] = BigInt(buckets);
  w[H_SEED0] = BigInt(seeds[0]!);
  w[H_SEED1] = BigInt(seeds[1]!);
  w[H_TTL] = BigInt(Math.round(opts.ttlMs));
  w.fill(NEVER, HEADER);
  Atomics.store(w, H_MAGIC, MAGIC);
  return buf;
}

/** One thread's handle on the shared known-address table (any number of handles per thread). */
export class SharedKnownAddresses implements KnownAddressBook {
  private readonly words: BigInt64Array;
  private readonly buckets: number;
  private readonly seeds: [number, number];
  private readonly ttlMs: bigint;

  constructor(buffer: SharedArrayBuffer) {
    this.words = new BigInt64Array(buffer);
    if (this.words.length < HEADER || Atomics.load(this.words, H_MAGIC) !== MAGIC)
      throw new AppError("INTERNAL", "shared known addresses: the buffer was not made by createSharedKnown");
    this.buckets = Number(this.words[H_BUCKETS]);
    this.seeds = [Number(this.words[H_SEED0]), Number(this.words[H_SEED1])];
    this.ttlMs = this.words[H_TTL]!;
  }

  /** `ip` completed a valid frame at `nowMs` (a later time already there is kept). */
  remember(ip: string, nowMs: number): void {
    const now = BigInt(Math.floor(nowMs));
    for (const i of this.entries(ip)) {
      for (;;) {
        const at = Atomics.load(this.words, i);
        if (at >= now || Atomics.compareExchange(this.words, i, at, now) === at) break;
      }
    }
  }

  /** Whether both entries of `ip` were written within the time to live before `nowMs`. */
  has(ip: string, nowMs: number): boolean {
    const now = BigInt(Math.floor(nowMs));
    const [a, b] = this.entries(ip);
    return now - Atomics.load(this.words, a) <= this.ttlMs && now - Atomics.load(this.words, b) <= this.ttlMs;
  }

  /** Entries of the first table written within the time to live (about the number of known addresses while few). */
  get size(): number {
    const now = BigInt(Date.now());
    let n = 0;
    for (let i = HEADER; i < HEADER + this.buckets; i++) if (now - Atomics.load(this.words, i) <= this.ttlMs) n++;
    return n;
  }

  private entries(ip: string): [number, number] {
    return entriesOf(ip, this.buckets, this.seeds);
  }
}

function entriesOf(ip: string, buckets: number, seeds: [number, number]): [number, number] {
  const mask = buckets - 1;
  return [
    HEADER + (Bun.hash.murmur32v3(ip, seeds[0]) & mask),
    HEADER + buckets + (Bun.hash.murmur32v3(ip, seeds[1]) & mask),
  ];
}

/** The entries (table 0 index, table 1 index) of `ip` (for tests of collisions). */
export function knownEntries(buffer: SharedArrayBuffer, ip: string): [number, number] {
  const w = new BigInt64Array(buffer);
  const buckets = Number(w[H_BUCKETS]);
  const [a, b] = entriesOf(ip, buckets, [Number(w[H_SEED0]), Number(w[H_SEED1])]);
  return [a - HEADER, b - HEADER - buckets];
}
