/**
 * The connection slots of one HEP stream listener kept over several threads, each with its own
 * listener on the same port (docs/ARCHITECTURE.md "HEP stream connections", "Slots over several
 * threads"). The state lives in a SharedArrayBuffer, fixed in size, updated with Atomics only (no
 * lock, nothing held across an await), so that `max_connections`, `max_connections_per_ip` and the
 * reserved share hold over all threads together.
 *
 * Layout (Int32 words): a header, then one row per thread: the row's owner flag, the connections
 * the thread holds, and two tables of `buckets` counters, one per hash of the source address
 * (count-min). A thread writes only its own row; a check adds the rows of every thread. Keeping
 * each thread's share apart is what makes `releaseThread` exact: a dead thread's row is zeroed and
 * nothing else changes.
 */
import { AppError } from "../../core/index.ts";
import type { Admission, SlotLimits, SlotTable } from "./slots.ts";

const MAGIC = 0x48534c31; // "HSL1"
const H_MAGIC = 0;
const H_THREADS = 1;
const H_BUCKETS = 2;
const H_MAX = 3;
const H_PER_IP = 4;
const H_RESERVED = 5;
const H_SEED0 = 6;
const H_SEED1 = 7;
const HEADER = 8;
/** Row offsets: owner flag, connections held, then the two bucket tables. */
const R_OWNER = 0;
const R_TOTAL = 1;
const R_TABLES = 2;

/** Counters per hash table: 4 096 (docs/ARCHITECTURE.md "Slots over several threads" gives the odds of a collision). */
export const DEFAULT_SLOT_BUCKETS = 4096;

export interface SharedSlotsOptions {
  /** Threads that may hold slots (thread indexes 0 .. threads-1). */
  threads: number;
  /** Counters per hash table, a power of two (default 4 096). */
  buckets?: number;
}

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

/** Two random hash seeds, so that nobody can choose addresses that land on an agent's counters. */
function randomSeeds(): [number, number] {
  const s = crypto.getRandomValues(new Int32Array(2));
  return [s[0]!, s[1]!];
}

const rowWords = (buckets: number) => R_TABLES + 2 * buckets;

/**
 * The shared slot state of one stream listener (TCP or TLS) for `threads` threads: plain data that
 * can be posted to a Worker. Its size is fixed: (8 + threads · (2 + 2 · buckets)) · 4 bytes
 * (32 KiB per thread at 4 096 buckets).
 */
export function createSharedSlots(limits: SlotLimits, opts: SharedSlotsOptions): SharedArrayBuffer {
  const buckets = opts.buckets ?? DEFAULT_SLOT_BUCKETS;
  if (!isPowerOfTwo(buckets))
    throw new AppError("INTERNAL", `shared slots: buckets must be a power of two, got ${buckets}`);
  if (!Number.isInteger(opts.threads) || opts.threads < 1)
    throw new AppError("INTERNAL", `shared slots: threads must be a positive integer, got ${opts.threads}`);
  const buf = new SharedArrayBuffer((HEADER + opts.threads * rowWords(buckets)) * 4);
  const w = new Int32Array(buf);
  const [s0, s1] = randomSeeds();
  w[H_THREADS] = opts.threads;
  w[H_BUCKETS] = buckets;
  w[H_MAX] = limits.maxConnections;
  w[H_PER_IP] = limits.maxConnectionsPerIp;
  w[H_RESERVED] = limits.reservedForKnown;
  w[H_SEED0] = s0;
  w[H_SEED1] = s1;
  Atomics.store(w, H_MAGIC, MAGIC);
  return buf;
}

interface Layout {
  words: Int32Array;
  threads: number;
  buckets: number;
  seeds: [number, number];
  limits: SlotLimits;
}

function layout(buffer: SharedArrayBuffer): Layout {
  const words = new Int32Array(buffer);
  if (words.length < HEADER || Atomics.load(words, H_MAGIC) !== MAGIC)
    throw new AppError("INTERNAL", "shared slots: the buffer was not made by createSharedSlots");
  return {
    words,
    threads: words[H_THREADS]!,
    buckets: words[H_BUCKETS]!,
    seeds: [words[H_SEED0]!, words[H_SEED1]!],
    limits: {
      maxConnections: words[H_MAX]!,
      maxConnectionsPerIp: words[H_PER_IP]!,
      reservedForKnown: words[H_RESERVED]!,
    },
  };
}

/** Offsets (within a row) of the two counters of `ip`. */
function bucketsOf(l: Layout, ip: string): [number, number] {
  const mask = l.buckets - 1;
  return [
    R_TABLES + (Bun.hash.murmur32v3(ip, l.seeds[0] >>> 0) & mask),
    R_TABLES + l.buckets + (Bun.hash.murmur32v3(ip, l.seeds[1] >>> 0) & mask),
  ];
}

const rowBase = (l: Layout, thread: number) => HEADER + thread * rowWords(l.buckets);

/** Word `offset` added over the rows of every thread. */
function sumOver(l: Layout, offset: number): number {
  const stride = rowWords(l.buckets);
  let n = 0;
  for (let t = 0, i = HEADER + offset; t < l.threads; t++, i += stride) n += Atomics.load(l.words, i);
  return n;
}

/** Subtracts one, never below zero (a row zeroed by releaseThread under a thread still running stays at zero). */
function decrement(words: Int32Array, i: number): void {
  for (;;) {
    const n = Atomics.load(words, i);
    if (n <= 0 || Atomics.compareExchange(words, i, n, n - 1) === n) return;
  }
}

function checkThread(l: Layout, thread: number): void {
  if (!Number.isInteger(thread) || thread < 0 || thread >= l.threads)
    throw new AppError("INTERNAL", `shared slots: thread index ${thread} outside 0..${l.threads - 1}`);
}

/**
 * Removes everything thread `thread` held: its connections and its per-address counts. For the
 * host, once the thread's Worker has exited (its sockets are gone with it); the index may then be
 * used by a new thread. Called under a thread that still runs, that thread's connections are no
 * longer counted (its later releases stop at zero): call it only after the exit.
 */
export function releaseThread(buffer: SharedArrayBuffer, thread: number): void {
  const l = layout(buffer);
  checkThread(l, thread);
  const base = rowBase(l, thread);
  for (let i = base + R_TOTAL; i < base + rowWords(l.buckets); i++) Atomics.store(l.words, i, 0);
  Atomics.store(l.words, base + R_OWNER, 0);
}

/** The limits `buffer` was made with. */
export const sharedSlotLimits = (buffer: SharedArrayBuffer): SlotLimits => layout(buffer).limits;

/** Connections held in all and per thread (for diagnostics and tests). */
export function sharedSlotsUsage(buffer: SharedArrayBuffer): { total: number; perThread: number[] } {
  const l = layout(buffer);
  const perThread = Array.from({ length: l.threads }, (_, t) => Atomics.load(l.words, rowBase(l, t) + R_TOTAL));
  return { total: perThread.reduce((a, b) => a + b, 0), perThread };
}

/** The two counters (table 0 index, table 1 index) `ip` is counted under (for tests of collisions). */
export function addressBuckets(buffer: SharedArrayBuffer, ip: string): [number, number] {
  const l = layout(buffer);
  const [a, b] = bucketsOf(l, ip);
  return [a - R_TABLES, b - R_TABLES - l.buckets];
}

/**
 * One thread's view of the shared slots, with the methods of ConnectionSlots. The thread's own
 * connections (for eviction and the idle sweep) stay in this object; the counts are shared.
 *
 * `admit` reserves the slot it grants (so that two threads cannot both take the last one) and
 * `add` takes the reservation; `add` without a granted `admit` takes a slot unchecked, as
 * ConnectionSlots.add does. Each check adds one to this thread's counter first and then reads the
 * sum over all threads, undoing the add when the sum is over the limit: with sequentially
 * consistent Atomics, of two threads racing for the last slot at least one sees the other, so a
 * limit is never exceeded; at worst both refuse.
 */
export class SharedConnectionSlots<T> implements SlotTable<T> {
  readonly limits: SlotLimits;
  private readonly l: Layout;
  private readonly base: number;
  private readonly held = new Set<T>();
  /** Connections that have not completed a valid frame yet, oldest accept first (Set order). */
  private readonly unproven = new Set<T>();
  /** The slot granted by the last `admit`, until `add` takes it. */
  private reserved: { ip: string; at: [number, number] } | undefined;

  constructor(buffer: SharedArrayBuffer, thread: number) {
    this.l = layout(buffer);
    checkThread(this.l, thread);
    this.limits = this.l.limits;
    this.base = rowBase(this.l, thread);
    // One owner per row: two owners would undo each other's counts and releaseThread would be wrong.
    if (Atomics.compareExchange(this.l.words, this.base + R_OWNER, 0, 1) !== 0) {
      throw new AppError(
        "INTERNAL",
        `shared slots: thread index ${thread} is in use (releaseThread frees it once its thread has exited)`,
      );
    }
  }

  /** Connections this thread holds. */
  get size(): number {
    return this.held.size;
  }

  /** Connections held by every thread. */
  get total(): number {
    return sumOver(this.l, R_TOTAL);
  }

  connections(): IterableIterator<T> {
    return this.held.values();
  }

  /** The rules of ConnectionSlots.admit over every thread's connections; evicts only from this thread. */
  admit(ip: string, known: boolean): Admission<T> {
    this.cancelReservation();
    const w = this.l.words;
    const at = bucketsOf(this.l, ip);
    const [b0, b1] = at;
    Atomics.add(w, this.base + b0, 1);
    Atomics.add(w, this.base + b1, 1);
    // Count-min: the smaller of the two sums is the closest to the address's own count.
    if (Math.min(sumOver(this.l, b0), sumOver(this.l, b1)) > this.limits.maxConnectionsPerIp) {
      this.undo(at, false);
      return { ok: false, reason: "per_ip_limit" };
    }
    Atomics.add(w, this.base + R_TOTAL, 1);
    const open = sumOver(this.l, R_TOTAL) - 1;
    if (!known) {
      if (open < this.limits.maxConnections - this.limits.reservedForKnown) return this.grant(ip, at);
      this.undo(at, true);
      return { ok: false, reason: open >= this.limits.maxConnections ? "max_connections" : "reserved_for_known" };
    }
    if (open < this.limits.maxConnections) return this.grant(ip, at);
    const oldest = this.unproven.values().next();
    if (oldest.done) {
      this.undo(at, true);
      return { ok: false, reason: "max_connections" };
    }
    // The slot stays counted: releasing `evict` (the caller does it before `add`) gives it back,
    // so no other thread can take it in between (it sees one over the limit and refuses).
    this.grant(ip, at);
    return { ok: true, evict: oldest.value };
  }

  add(conn: T, ip: string): void {
    if (this.reserved?.ip === ip) this.reserved = undefined;
    else {
      this.cancelReservation();
      const [b0, b1] = bucketsOf(this.l, ip);
      Atomics.add(this.l.words, this.base + b0, 1);
      Atomics.add(this.l.words, this.base + b1, 1);
      Atomics.add(this.l.words, this.base + R_TOTAL, 1);
    }
    this.held.add(conn);
    this.unproven.add(conn);
  }

  prove(conn: T): void {
    this.unproven.delete(conn);
  }

  release(conn: T, ip: string): boolean {
    if (!this.held.delete(conn)) return false;
    this.unproven.delete(conn);
    this.undo(bucketsOf(this.l, ip), true);
    return true;
  }

  /** Gives up every slot of this thread (the listener stopped); the row stays owned by this object. */
  clear(): void {
    this.held.clear();
    this.unproven.clear();
    this.reserved = undefined;
    const end = this.base + rowWords(this.l.buckets);
    for (let i = this.base + R_TOTAL; i < end; i++) Atomics.store(this.l.words, i, 0);
  }

  private grant(ip: string, at: [number, number]): Admission<T> {
    this.reserved = { ip, at };
    return { ok: true };
  }

  private cancelReservation(): void {
    if (this.reserved) this.undo(this.reserved.at, true);
    this.reserved = undefined;
  }

  private undo([b0, b1]: [number, number], total: boolean): void {
    const w = this.l.words;
    if (total) decrement(w, this.base + R_TOTAL);
    decrement(w, this.base + b0);
    decrement(w, this.base + b1);
  }
}
