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

interface Held {
  e: StreamEvent;
  ts: number;
  /** The hand-over round it came in: settled once every thread has handed over in a later one. */
  round: number;
  came: number;
  seq: number;
}

export class StreamMerge {
  private held: Held[] = [];
  private seq = 0;
  /** Hand-overs seen so far (any thread); each thread's latest. */
  private round = 0;
  private readonly last: number[];
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
    return this.held.length;
  }

  /** A chunk of captured events from thread `from` (or another producer); the bytes are kept. */
  accept(bytes: Uint8Array, count: number): void {
    const came = this.now();
    const round = this.round;
    for (const e of eventsOf(bytes, count)) this.held.push({ e, ts: e.tsUs, round, came, seq: this.seq++ });
    if (this.held.length > this.o.maxHeld) this.release(true);
  }

  /** Thread `from` handed over (with or without events; after its chunk's accept): settles what came before. */
  handedOver(from: number): void {
    this.round++;
    if (from >= 0 && from < this.last.length) this.last[from] = this.round;
    this.release();
  }

  /** Sends what is due (see the class), or everything held with `all` (stop, too many held). */
  release(all = false): void {
    if (this.held.length === 0) return;
    let settledBefore = Number.POSITIVE_INFINITY;
    for (const r of this.last) settledBefore = Math.min(settledBefore, r);
    const forcedBy = this.now() - this.o.maxHoldMs;
    const due = (h: Held) => all || h.round < settledBefore || h.came <= forcedBy;
    let firstOpen = Number.POSITIVE_INFINITY;
    for (const h of this.held) if (!due(h) && h.ts < firstOpen) firstOpen = h.ts;
    const out: Held[] = [];
    const keep: Held[] = [];
    for (const h of this.held) (due(h) && h.ts <= firstOpen ? out : keep).push(h);
    if (out.length === 0) return;
    this.held = keep;
    out.sort((a, b) => a.ts - b.ts || a.seq - b.seq);
    this.sink(out.map((h) => h.e));
  }

  /** Sends everything held (the node stops). */
  close(): void {
    this.release(true);
  }
}
