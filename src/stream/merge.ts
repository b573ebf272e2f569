import { eventsOf, type StreamEvent } from "./event.ts";

/**
 * The live stream of several HEP ingest threads (docs/STREAM.md "Several ingest threads"). UDP
 * datagrams go to the threads at random and each thread hands over its own chunk every seal
 * interval, so a call whose INVITE went to one thread and its 180 to another would reach
 * subscribers in hand-over order, the 180 first. The merge puts them back in capture-time order,
 * the order a search gives:
 * - an event is *settled* once every thread has handed over again after it came: whatever a
 *   thread had read by then is here;
 * - settled events go out in capture-time order (ties in the order they came), up to the capture
 *   time of the first event not settled yet, which may still be preceded by one on its way;
 * - an event held `maxHoldMs` goes out anyway (a thread that stopped handing over, an agent whose
 *   clock runs ahead of the others), and more than `maxHeld` held events go out at once, so the
 *   delay and the memory stay bounded.
 * The delay is one hand-over round of the threads (the seal interval, 100 ms), two at most.
 */
export interface MergeOptions {
  /** The ingest threads whose hand-overs settle an event (indices 0 .. threads-1). */
  threads: number;
  maxHoldMs: number;
  maxHeld: number;
  /** Milliseconds (tests move it). */
  now?: () => number;
}

/** One thread's chunk while it waits: its events, their capture times, and when it came. */
interface Held {
  events: StreamEvent[];
  ts: number[];
  minTs: number;
  maxTs: number;
  /** The hand-over round it came in: settled once every thread has handed over in a later one. */
  round: number;
  came: number;
}

export class StreamMerge {
  /** In arrival order. */
  private held: Held[] = [];
  private count = 0;
  /** Hand-overs seen so far (from every thread); each thread's latest; the settled bound last released at. */
  private round = 0;
  private readonly last: number[];
  private releasedAt = 0;
  private readonly now: () => number;

  constructor(
    private readonly sink: (events: StreamEvent[]) => void,
    private readonly o: MergeOptions,
  ) {
    this.now = o.now ?? (() => performance.now());
    this.last = new Array<number>(o.threads).fill(0);
  }

  /** Events held now. */
  get size(): number {
    return this.count;
  }

  /** A chunk of captured events from a thread (or another producer); the bytes are kept. */
  accept(bytes: Uint8Array, count: number): void {
    const events: StreamEvent[] = [];
    const ts: number[] = [];
    let minTs = Number.POSITIVE_INFINITY;
    let maxTs = Number.NEGATIVE_INFINITY;
    for (const e of eventsOf(bytes, count)) {
      const t = e.tsUs;
      events.push(e);
      ts.push(t);
      if (t < minTs) minTs = t;
      if (t > maxTs) maxTs = t;
    }
    if (events.length === 0) return;
    this.held.push({ events, ts, minTs, maxTs, round: this.round, came: this.now() });
    this.count += events.length;
    if (this.count > this.o.maxHeld) this.release(true);
  }

  /**
   * Thread `from` handed over (with or without events; after its chunk's accept). It settles what
   * came before only when `drained`: its socket held nothing more, so all it had been sent is here.
   */
  handedOver(from: number, drained = true): void {
    this.round++;
    if (drained && from >= 0 && from < this.last.length) this.last[from] = this.round;
    this.release();
  }

  /** Sends what is due (see the class), or everything held with `all` (stop, too many held). */
  release(all = false): void {
    const held = this.held;
    if (held.length === 0) return;
    let settledBefore = Number.POSITIVE_INFINITY;
    for (const r of this.last) settledBefore = Math.min(settledBefore, r);
    const forcedBy = this.now() - this.o.maxHoldMs;
    // Nothing new is due unless the slowest thread handed over or the oldest chunk waited its most.
    if (!all && settledBefore === this.releasedAt && held[0]!.came > forcedBy) return;
    this.releasedAt = settledBefore;
    const due = (h: Held) => all || h.round < settledBefore || h.came <= forcedBy;
    let firstOpen = Number.POSITIVE_INFINITY;
    for (const h of held) if (!due(h) && h.minTs < firstOpen) firstOpen = h.minTs;
    const runs: Run[] = [];
    const keep: Held[] = [];
    let n = 0;
    for (const h of held) {
      if (!due(h) || h.minTs > firstOpen) {
        keep.push(h);
        continue;
      }
      let run: Run = h;
      if (h.maxTs > firstOpen) {
        const [out, rest] = split(h, firstOpen);
        keep.push(rest);
        run = out;
      }
      runs.push(run);
      n += run.events.length;
    }
    if (n === 0) return;
    this.held = keep;
    this.count -= n;
    this.sink(inTimeOrder(runs));
  }

  /** Sends everything held (the node stops). */
  close(): void {
    this.release(true);
  }
}

/** Events with their capture times, in the order they came. */
interface Run {
  events: StreamEvent[];
  ts: number[];
}

/** `h` cut at `bound`: the events at or before it, and a chunk of the rest (same round, same arrival). */
function split(h: Held, bound: number): [Run, Held] {
  const out: Run = { events: [], ts: [] };
  const rest: Held = {
    events: [],
    ts: [],
    minTs: Number.POSITIVE_INFINITY,
    maxTs: Number.NEGATIVE_INFINITY,
    round: h.round,
    came: h.came,
  };
  for (let i = 0; i < h.events.length; i++) {
    const t = h.ts[i]!;
    const to = t <= bound ? out : rest;
    to.events.push(h.events[i]!);
    to.ts.push(t);
    if (to === rest) {
      rest.minTs = Math.min(rest.minTs, t);
      rest.maxTs = Math.max(rest.maxTs, t);
    }
  }
  return [out, rest];
}

/**
 * The runs' events by capture time, equal times in run order (the order they came). A thread's
 * chunk is almost always in time order already, so runs are merged pairwise (log2 of the runs
 * passes over the events) rather than sorted; a run out of order is sorted on its own first.
 */
function inTimeOrder(runs: Run[]): StreamEvent[] {
  let rs = runs.map(ordered);
  while (rs.length > 1) {
    const next: Run[] = [];
    for (let i = 0; i < rs.length; i += 2) next.push(i + 1 < rs.length ? merge2(rs[i]!, rs[i + 1]!) : rs[i]!);
    rs = next;
  }
  return rs[0]?.events ?? [];
}

function ordered(r: Run): Run {
  let sorted = true;
  for (let i = 1; i < r.ts.length && sorted; i++) sorted = r.ts[i - 1]! <= r.ts[i]!;
  if (sorted) return r;
  const order = Array.from({ length: r.ts.length }, (_, i) => i);
  order.sort((a, b) => r.ts[a]! - r.ts[b]! || a - b);
  return { events: order.map((i) => r.events[i]!), ts: order.map((i) => r.ts[i]!) };
}

/** Two runs in time order into one; on equal times `a` (the earlier) first. */
function merge2(a: Run, b: Run): Run {
  const events: StreamEvent[] = [];
  const ts: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.ts.length && j < b.ts.length) {
    if (b.ts[j]! < a.ts[i]!) {
      events.push(b.events[j]!);
      ts.push(b.ts[j++]!);
    } else {
      events.push(a.events[i]!);
      ts.push(a.ts[i++]!);
    }
  }
  for (; i < a.ts.length; i++) {
    events.push(a.events[i]!);
    ts.push(a.ts[i]!);
  }
  for (; j < b.ts.length; j++) {
    events.push(b.events[j]!);
    ts.push(b.ts[j]!);
  }
  return { events, ts };
}
