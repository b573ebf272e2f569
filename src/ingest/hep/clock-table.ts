/**
 * The per-source clock offsets of several ingest threads in one SharedArrayBuffer
 * (docs/ARCHITECTURE.md "Agent clocks outside the accepted window"). UDP datagrams go to the
 * threads at random, so one source's out-of-window packets reach every thread; with an offset per
 * thread each would anchor the source on its own first packet, and a replayed call's messages
 * would be shifted by slightly different offsets (their spacing, even their order, lost). One
 * table for all threads gives each source one offset.
 *
 * Layout: buckets of 8 entries, as many buckets (a power of two) as make at least twice
 * `maxSources` entries (10 000 sources: 4 096 buckets, 0.8 MiB; the most, 1 000 000: 49 MiB). An entry is two 32-bit hashes of the source (FNV-1a with two bases; 0 in the second
 * word means empty), its offset (µs) and when it was last used (ms). A source lives in the bucket
 * its first hash picks; a new source takes an empty entry there, or the least recently used one.
 * Each bucket has a spin lock (Atomics.compareExchange), held only for the few reads and writes
 * of one update, never across an await; only out-of-window packets get here.
 */
export interface ClockEntry {
  offsetUs: number;
  lastMs: number;
}

/** Where SourceClocks keeps its offsets: `update` reads the source's entry and stores what `fn` returns. */
export interface ClockStore {
  update(source: string, fn: (entry: ClockEntry | undefined) => ClockEntry): ClockEntry;
  readonly size: number;
}

const WAYS = 8;

function fnv1a(s: string, basis: number): number {
  let h = basis;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * Takes a bucket's lock. Another thread holds it for a few loads and stores: a few tries, then the
 * thread sleeps on the lock word (Atomics.wait, woken by unlock), so a holder the scheduler put
 * aside gets the core instead of spinners. A thread ended by `terminate()` inside those stores
 * would hold it for ever, so after 1 s the lock is taken over: at worst one entry is written by two
 * threads at once (one source anchored again), where waiting on would stop every thread that
 * meets that bucket.
 */
function lock(locks: Int32Array, bucket: number): void {
  for (let tries = 0; tries < 64; tries++) if (Atomics.compareExchange(locks, bucket, 0, 1) === 0) return;
  const deadline = performance.now() + 1000;
  while (Atomics.compareExchange(locks, bucket, 0, 1) !== 0) {
    if (performance.now() > deadline) return;
    Atomics.wait(locks, bucket, 1, 1);
  }
}

function unlock(locks: Int32Array, bucket: number): void {
  Atomics.store(locks, bucket, 0);
  Atomics.notify(locks, bucket, 1);
}

/** Int32 words before the entries' Float64 values: the bucket count, a lock per bucket, two key words per entry (8-aligned). */
const intWords = (buckets: number) => 2 * Math.ceil((1 + buckets + 2 * buckets * WAYS) / 2);

/** The buffer for `maxSources` sources: made once by the host, given to every thread. */
export function createClockTableBuffer(maxSources: number): SharedArrayBuffer {
  // Twice the entries: sources meet in buckets by hash, and a full bucket forgets one early.
  let buckets = 1;
  while (buckets * WAYS < 2 * maxSources) buckets *= 2;
  const buffer = new SharedArrayBuffer(4 * intWords(buckets) + 2 * 8 * buckets * WAYS);
  new Int32Array(buffer, 0, 1)[0] = buckets;
  return buffer;
}

export class SharedClockTable implements ClockStore {
  private readonly buckets: number;
  private readonly locks: Int32Array;
  private readonly keys: Int32Array;
  private readonly values: Float64Array;

  constructor(buffer: SharedArrayBuffer) {
    const b = new Int32Array(buffer, 0, 1)[0]!;
    this.buckets = b;
    this.locks = new Int32Array(buffer, 4, b);
    this.keys = new Int32Array(buffer, 4 * (1 + b), 2 * b * WAYS);
    this.values = new Float64Array(buffer, 4 * intWords(b), 2 * b * WAYS);
  }

  get size(): number {
    let n = 0;
    for (let i = 1; i < this.keys.length; i += 2) if (Atomics.load(this.keys, i) !== 0) n++;
    return n;
  }

  update(source: string, fn: (entry: ClockEntry | undefined) => ClockEntry): ClockEntry {
    const h1 = fnv1a(source, 2166136261) | 0;
    const h2 = fnv1a(source, 2166136261 ^ 0x5bd1e995) | 1;
    const bucket = (h1 >>> 0) & (this.buckets - 1);
    const locks = this.locks;
    lock(locks, bucket);
    try {
      const keys = this.keys;
      const values = this.values;
      let found = -1;
      let empty = -1;
      let lru = -1;
      for (let e = bucket * WAYS; e < (bucket + 1) * WAYS; e++) {
        const k2 = keys[2 * e + 1]!;
        if (k2 === 0) {
          if (empty < 0) empty = e;
        } else if (k2 === h2 && keys[2 * e] === h1) {
          found = e;
          break;
        } else if (lru < 0 || values[2 * e + 1]! < values[2 * lru + 1]!) lru = e;
      }
      const next = fn(found >= 0 ? { offsetUs: values[2 * found]!, lastMs: values[2 * found + 1]! } : undefined);
      const e = found >= 0 ? found : empty >= 0 ? empty : lru;
      keys[2 * e] = h1;
      keys[2 * e + 1] = h2;
      values[2 * e] = next.offsetUs;
      values[2 * e + 1] = next.lastMs;
      return next;
    } finally {
      unlock(locks, bucket);
    }
  }
}

/** One pipeline's own offsets: an LRU of `maxSources` (insertion order is recency). */
export class LocalClockStore implements ClockStore {
  private readonly sources = new Map<string, ClockEntry>();

  constructor(private readonly maxSources: number) {}

  get size(): number {
    return this.sources.size;
  }

  update(source: string, fn: (entry: ClockEntry | undefined) => ClockEntry): ClockEntry {
    const found = this.sources.get(source);
    if (found) this.sources.delete(source);
    else if (this.sources.size >= this.maxSources) {
      const oldest = this.sources.keys().next().value;
      if (oldest !== undefined) this.sources.delete(oldest);
    }
    const next = fn(found);
    this.sources.set(source, next);
    return next;
  }
}
