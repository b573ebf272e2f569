import { fail, ok, type Counter, type Result } from "../core/index.ts";

/**
 * Who holds a live-stream slot (docs/STREAM.md "Subscriber slots"): an anonymous client of the
 * node's `/stream`, known only by its remote address, or an authenticated user of the
 * coordinator's `/api/v4/stream/hep`.
 */
export type StreamCaller = { kind: "anonymous"; address: string } | { kind: "user"; user: string; admin: boolean };

/** The slot keys of `ingest.hep_stream` (src/config/schema.ts). */
export interface SlotLimits {
  max_subscribers: number;
  max_subscribers_per_address: number;
  max_subscribers_per_user: number;
}

export type SlotRefusal = "max_subscribers" | "per_address" | "per_user";
export const SLOT_REFUSALS: readonly SlotRefusal[] = ["max_subscribers", "per_address", "per_user"];

/** A slot's holder: `giveWay` closes it (and releases the slot) to make room for an administrator. */
export interface SlotHolder {
  readonly caller: StreamCaller;
  giveWay(code: number, reason: string): void;
}

export interface SlotCounters {
  refused: Counter<"reason">;
  /** Subscribers closed to make room for an administrator. */
  evicted: Counter;
}

/** Close code of an evicted subscriber: try again later (RFC 6455 registry, 1013), like a refusal. */
const TRY_AGAIN_LATER = 1013;
export const EVICTED_REASON =
  "an administrator took this live-stream slot (ingest.hep_stream.max_subscribers is reached); try again later";

const userKey = (c: StreamCaller) => (c.kind === "user" ? c.user : undefined);
const addressKey = (c: StreamCaller) => (c.kind === "anonymous" ? c.address : undefined);

/**
 * The slots of one stream source (docs/STREAM.md "Subscriber slots"). At the cap,
 * `max_subscribers`, anonymous clients and users are refused. Then the shares, so one client
 * cannot take every slot: an anonymous client (node `/stream`) gets at most
 * `max_subscribers_per_address` per remote address, a user at most `max_subscribers_per_user`
 * (administrators too: their own sockets). An administrator is never refused for lack of a slot:
 * at the cap the oldest anonymous subscriber gives way (closed with 1013 and EVICTED_REASON), else
 * the oldest non-administrator; when only administrators hold slots, the administrator gets one
 * beyond the cap (bounded by the per-user share of each administrator account). Holders are kept
 * in arrival order, so the first found is the oldest.
 */
export class StreamSlots<H extends SlotHolder> {
  private readonly held = new Set<H>();

  constructor(
    private readonly limits: SlotLimits,
    private readonly counters: SlotCounters,
  ) {}

  get size(): number {
    return this.held.size;
  }

  [Symbol.iterator](): IterableIterator<H> {
    return this.held.values();
  }

  /** Takes a slot for `holder`, or says why not (counted in `refused` by reason). */
  claim(holder: H): Result<void, SlotRefusal> {
    const refused = this.refusal(holder.caller);
    if (refused) {
      this.counters.refused.inc({ reason: refused.reason });
      return refused;
    }
    this.held.add(holder);
    return ok(undefined);
  }

  /** The holder left: false when it held no slot (already released). */
  release(holder: H): boolean {
    return this.held.delete(holder);
  }

  private refusal(c: StreamCaller): ReturnType<typeof fail<SlotRefusal>> | undefined {
    const l = this.limits;
    const admin = c.kind === "user" && c.admin;
    if (this.held.size >= l.max_subscribers && !admin)
      return fail(
        "max_subscribers",
        `the live stream has ${this.held.size} subscribers, its limit (ingest.hep_stream.max_subscribers)`,
      );
    const address = addressKey(c);
    if (address !== undefined && this.count((h) => addressKey(h.caller) === address) >= l.max_subscribers_per_address) {
      return fail(
        "per_address",
        `${address} has ${l.max_subscribers_per_address} live-stream subscribers, its share (ingest.hep_stream.max_subscribers_per_address)`,
      );
    }
    const user = userKey(c);
    if (user !== undefined && this.count((h) => userKey(h.caller) === user) >= l.max_subscribers_per_user) {
      return fail(
        "per_user",
        `user ${user} has ${l.max_subscribers_per_user} live-stream subscribers, the share of one user (ingest.hep_stream.max_subscribers_per_user)`,
      );
    }
    if (this.held.size < l.max_subscribers) return undefined;
    // An administrator at the cap: the oldest anonymous subscriber gives way, else the oldest user
    // who is not an administrator; when administrators hold every slot, one more is allowed.
    const victim =
      this.oldest((h) => h.caller.kind === "anonymous") ??
      this.oldest((h) => h.caller.kind === "user" && !h.caller.admin);
    if (victim) {
      this.held.delete(victim);
      this.counters.evicted.inc();
      victim.giveWay(TRY_AGAIN_LATER, EVICTED_REASON);
    }
    return undefined;
  }

  private count(pred: (h: H) => boolean): number {
    let n = 0;
    for (const h of this.held) if (pred(h)) n++;
    return n;
  }

  private oldest(pred: (h: H) => boolean): H | undefined {
    for (const h of this.held) if (pred(h)) return h;
    return undefined;
  }
}
