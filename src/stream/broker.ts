import { ok, type Counter, type Gauge, type MetricsRegistry, type Result } from "../core/index.ts";
import { eventsOf, type StreamEvent } from "./event.ts";
import type { StreamFilter } from "./filter.ts";
import { Outbox, type Outlet, type OutboxCounters } from "./outbox.ts";
import {
  SLOT_REFUSALS,
  StreamSlots,
  type SlotHolder,
  type SlotLimits,
  type SlotRefusal,
  type StreamCaller,
} from "./slots.ts";

/**
 * The node's live-event broker (`ingest.hep_stream.*`; docs/STREAM.md "Turning it on"):
 * a ring of the last `buffer_size` events (for `history`), at most `max_subscribers`, each with its
 * filter, a token bucket of `rate_per_sub_pps` (0 = unlimited) and an Outbox of
 * `per_sub_queue_len`. Every loss is counted in svc_stream_events_dropped_total by reason:
 * ring_overflow (the oldest event leaves the ring), rate_limit, queue_full, capture_full (the
 * ingest side's buffer of one tick was full). The broker never blocks ingest: it runs on the main
 * thread, fed a chunk of records per hand-over tick. With `retain` (ingest.hep_stream.enable) it
 * wants events with nobody subscribed too, so `history` reaches back for the first subscriber;
 * otherwise (the coordinator's in-process source alone) only while somebody subscribes. Slots
 * and their shares per address and per user: StreamSlots (docs/STREAM.md "Subscriber slots").
 * Without `allowPayload` no subscriber gets a payload, whatever its filter says (docs/STREAM.md
 * "Security": allow_payload false means no payload on any path).
 */
export interface BrokerConfig extends SlotLimits {
  buffer_size: number;
  per_sub_queue_len: number;
  rate_per_sub_pps: number;
}

/** What a stream endpoint subscribes to: the node's broker, or the coordinator's fan-in (src/cluster). */
export interface StreamSource {
  subscribe(
    filter: StreamFilter,
    outlet: Outlet,
    caller: StreamCaller,
  ): Result<StreamSubscription, SlotRefusal | "unavailable">;
}

export interface StreamSubscription {
  readonly outbox: Outbox;
  /** The subscriber left (socket closed): frees its slot. */
  close(): void;
}

export interface StreamMetrics {
  events: Counter;
  dropped: Counter<"reason">;
  sent: Counter;
  subscribers: Gauge;
  refused: Counter<"reason">;
  evicted: Counter;
}

export const DROP_REASONS = ["ring_overflow", "rate_limit", "queue_full", "capture_full"] as const;

/** Registered on every thread that counts stream drops (the ingest thread counts capture_full). */
export function streamMetrics(reg: MetricsRegistry): StreamMetrics {
  const m: StreamMetrics = {
    events: reg.counter(
      "svc_stream_events_total",
      "HEP events handed to the live-stream broker: every live packet while ingest.hep_stream.enable is on (the ring fills for history), otherwise only while somebody subscribes.",
    ),
    dropped: reg.counter(
      "svc_stream_events_dropped_total",
      "Live-stream events not delivered, per reason: ring_overflow (the oldest event left the ring of ingest.hep_stream.buffer_size), rate_limit (over rate_per_sub_pps for one subscriber), queue_full (one subscriber's per_sub_queue_len queue was full), capture_full (the ingest thread's hand-over buffer of one tick was full). Ingest itself never waits.",
      ["reason"],
    ),
    sent: reg.counter("svc_stream_frames_sent_total", "Live-stream frames handed to subscribers' sockets."),
    subscribers: reg.gauge("svc_stream_subscribers", "Live-stream subscribers of this process's broker."),
    refused: reg.counter(
      "svc_stream_subscribers_refused_total",
      "Live-stream connections refused, per reason: max_subscribers (every slot taken), per_address (one remote address's share of anonymous node /stream clients, ingest.hep_stream.max_subscribers_per_address), per_user (one user's share, ingest.hep_stream.max_subscribers_per_user).",
      ["reason"],
    ),
    evicted: reg.counter(
      "svc_stream_subscribers_evicted_total",
      "Live-stream subscribers closed (1013) to give their slot to an administrator while every slot was taken.",
    ),
  };
  for (const r of DROP_REASONS) m.dropped.inc({ reason: r }, 0);
  for (const r of SLOT_REFUSALS) m.refused.inc({ reason: r }, 0);
  return m;
}

export const outboxCounters = (m: StreamMetrics): OutboxCounters => ({
  queueFull: () => m.dropped.inc({ reason: "queue_full" }),
  sent: () => m.sent.inc(),
});

class Subscriber implements StreamSubscription, SlotHolder {
  tokens: number;
  last: number;
  left = false;
  constructor(
    readonly caller: StreamCaller,
    readonly filter: StreamFilter,
    readonly outbox: Outbox,
    readonly rate: number,
    now: number,
    private readonly leave: (s: Subscriber) => void,
  ) {
    this.tokens = rate;
    this.last = now;
  }
  /** One token of the bucket (capacity one second of `rate`); false = over the rate. */
  take(now: number): boolean {
    if (this.rate === 0) return true;
    if (now > this.last) {
      this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
  close(): void {
    this.leave(this);
  }
  giveWay(code: number, reason: string): void {
    this.outbox.close(code, reason);
    this.leave(this);
  }
}

export class StreamBroker implements StreamSource {
  private readonly ring: Array<StreamEvent | undefined>;
  private next = 0;
  private size = 0;
  private readonly subs: StreamSlots<Subscriber>;
  private readonly demandListeners: Array<(active: boolean) => void> = [];
  /** The `active` state the demand listeners last heard. */
  private demanded: boolean;
  private readonly counters: OutboxCounters;

  private readonly retain: boolean;
  private readonly allowPayload: boolean;
  private readonly now: () => number;

  constructor(
    readonly config: BrokerConfig,
    readonly metrics: StreamMetrics,
    opts: { retain?: boolean; allowPayload?: boolean; now?: () => number } = {},
  ) {
    this.ring = new Array<StreamEvent | undefined>(config.buffer_size);
    this.counters = outboxCounters(metrics);
    this.subs = new StreamSlots<Subscriber>(config, metrics);
    this.retain = opts.retain ?? false;
    this.allowPayload = opts.allowPayload ?? false;
    this.demanded = this.retain;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Subscribers now. */
  get subscribers(): number {
    return this.subs.size;
  }

  /** Whether events are wanted (the ring is kept, or somebody subscribes): the ingest side captures only then. */
  get active(): boolean {
    return this.retain || this.subs.size > 0;
  }

  /** Called with the new state whenever `active` changes, and at once when it already is. */
  onDemand(fn: (active: boolean) => void): void {
    this.demandListeners.push(fn);
    if (this.active) fn(true);
  }

  subscribe(asked: StreamFilter, outlet: Outlet, caller: StreamCaller): Result<StreamSubscription, SlotRefusal> {
    const filter = asked.includePayload && !this.allowPayload ? { ...asked, includePayload: false } : asked;
    const outbox = new Outbox(outlet, this.config.per_sub_queue_len, this.counters);
    const sub = new Subscriber(caller, filter, outbox, this.config.rate_per_sub_pps, this.now(), (s) => this.leave(s));
    const slot = this.subs.claim(sub);
    if (!slot.ok) return slot;
    this.replay(sub);
    this.metrics.subscribers.set(this.subs.size);
    this.syncDemand();
    return ok(sub);
  }

  /**
   * A sealed capture chunk (`count` records in `bytes`, which the broker may keep): each event
   * enters the ring and goes to every subscriber whose filter it passes, within its rate.
   */
  accept(bytes: Uint8Array, count: number): void {
    this.acceptEvents(eventsOf(bytes, count));
  }

  /** Events in the order subscribers get them (StreamMerge puts several threads' events in capture order). */
  acceptEvents(events: Iterable<StreamEvent>): void {
    const now = this.now();
    const ring = this.ring;
    const cap = ring.length;
    let n = 0;
    for (const e of events) {
      n++;
      if (this.size === cap) this.metrics.dropped.inc({ reason: "ring_overflow" });
      else this.size++;
      ring[this.next] = e;
      this.next = (this.next + 1) % cap;
      for (const s of this.subs) {
        if (s.outbox.closed || !e.matches(s.filter)) continue;
        if (!s.take(now)) {
          this.metrics.dropped.inc({ reason: "rate_limit" });
          continue;
        }
        s.outbox.push(e.json(s.filter.includePayload));
      }
    }
    this.metrics.events.inc(undefined, n);
  }

  /** Closes every subscriber (the node stops): they reconnect themselves. */
  closeAll(code: number, reason: string): void {
    for (const s of [...this.subs]) {
      s.outbox.close(code, reason);
      this.leave(s);
    }
  }

  /** The newest `history` matching events of the ring, oldest first, ahead of live events. */
  private replay(sub: Subscriber): void {
    const want = sub.filter.history;
    if (want <= 0 || this.size === 0) return;
    const cap = this.ring.length;
    const picked: StreamEvent[] = [];
    for (let i = 1; i <= this.size && picked.length < want; i++) {
      const e = this.ring[(this.next - i + cap) % cap];
      if (e?.matches(sub.filter)) picked.push(e);
    }
    for (let i = picked.length - 1; i >= 0; i--) sub.outbox.push(picked[i]!.json(sub.filter.includePayload), true);
  }

  private leave(s: Subscriber): void {
    if (s.left) return;
    s.left = true;
    // A subscriber that gave way to an administrator has lost its slot already (StreamSlots.claim).
    this.subs.release(s);
    s.outbox.detach();
    this.metrics.subscribers.set(this.subs.size);
    this.syncDemand();
  }

  /** Tells the demand listeners when `active` has changed since they last heard. */
  private syncDemand(): void {
    const active = this.active;
    if (active === this.demanded) return;
    this.demanded = active;
    for (const fn of this.demandListeners) fn(active);
  }
}
