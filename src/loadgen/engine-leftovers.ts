import type { Leg, SipCall } from "./call-host.ts";
import { STREAM_CLOSE_DELAY_MS } from "./transport.ts";

/**
 * What outlives a call of an engine (docs/LOADGEN.md "Engine"): the call itself for a while, so
 * that late retransmissions still find it (64·T1, the spirit of RFC 3261 section 17.1.1.2 Timers D
 * and K), and its own socket (`un`, `tn`, `ln`). A per-call stream closes STREAM_CLOSE_DELAY_MS
 * after its call (sipp's UAS keeps a call 4 s after the last 200 and counts a connection closed
 * before then as a failed call); a per-call UDP socket lingers with its call.
 */
export class CallLeftovers {
  private readonly own = new Map<string, Leg>();
  private readonly lingering = new Map<string, { call: SipCall; until: number }>();
  private sweep: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly lingerMs: number) {}

  /** Sweeps the calls whose time is up, once a second. */
  start(): void {
    this.sweep = setInterval(() => this.sweepNow(), 1000);
  }

  /** `leg` is `callId`'s own socket. */
  adopt(callId: string, leg: Leg): void {
    this.own.set(callId, leg);
  }

  /** The call has ended: it lingers, its own stream closes a little later. */
  ended(callId: string, call: SipCall): void {
    this.lingering.set(callId, { call, until: performance.now() + this.lingerMs });
    const own = this.own.get(callId);
    if (own?.reliable) {
      const t = setTimeout(() => {
        if (this.own.get(callId) !== own) return;
        own.close();
        this.own.delete(callId);
      }, STREAM_CLOSE_DELAY_MS);
      t.unref();
    }
  }

  /** An ended call that still lingers. */
  call(callId: string): SipCall | undefined {
    return this.lingering.get(callId)?.call;
  }

  /** The calls' own sockets not closed yet. */
  legs(): IterableIterator<Leg> {
    return this.own.values();
  }

  /** Disposes the lingering calls and closes the calls' own sockets. */
  close(): void {
    if (this.sweep) clearInterval(this.sweep);
    for (const l of this.lingering.values()) l.call.dispose();
    for (const leg of this.own.values()) leg.close();
  }

  private sweepNow(): void {
    const now = performance.now();
    for (const [id, l] of this.lingering) {
      if (l.until >= now) continue;
      this.lingering.delete(id);
      this.own.get(id)?.close();
      this.own.delete(id);
    }
  }
}
