/**
 * One subscriber's way out: its socket (`Outlet`) and the bounded queue in front of it
 * (`per_sub_queue_len`, docs/STREAM.md "Backpressure: nothing waits for a subscriber"). A frame goes straight to the socket while the
 * socket takes it; once the socket reports backpressure, frames wait in the queue until it drains,
 * and when the queue is full the new frame is dropped for this subscriber only (counted). Nothing
 * here ever waits: the caller (the broker dispatching a tick of events) goes on at once.
 */
export type SendResult = "sent" | "backpressure" | "closed";

export interface Outlet {
  /** Hands one text frame to the socket: "backpressure" = taken, but send no more until drain. */
  send(frame: string): SendResult;
  close(code: number, reason: string): void;
}

export interface OutboxCounters {
  /** A frame dropped because this subscriber's queue was full. */
  queueFull(): void;
  /** A frame handed to the socket. */
  sent(): void;
}

/** WebSocket close codes the stream uses (RFC 6455 section 7.4). */
export const CLOSE = {
  /** The server is going away (stop). */
  goingAway: 1001,
  /** Try again later: a subscriber limit (RFC 6455 registry, 1013). */
  tryAgainLater: 1013,
  /** A node the coordinator fans in from is unusable for this filter. */
  internal: 1011,
} as const;

export class Outbox {
  private readonly queue: string[] = [];
  private head = 0;
  private blocked = false;
  private done = false;

  constructor(
    private readonly outlet: Outlet,
    private readonly capacity: number,
    private readonly counters: OutboxCounters,
  ) {}

  get closed(): boolean {
    return this.done;
  }

  /** Frames waiting for the socket. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /**
   * Sends or queues `frame`; false when it was dropped (queue full) or the subscriber is gone.
   * `force` (history replay on connect) queues beyond the capacity: history is bounded by its own cap.
   */
  push(frame: string, force = false): boolean {
    if (this.done) return false;
    if (!this.blocked && this.pending === 0) return this.write(frame);
    if (!force && this.pending >= this.capacity) {
      this.counters.queueFull();
      return false;
    }
    this.queue.push(frame);
    return true;
  }

  /** The socket can take more (its drain event): queued frames go out until it pushes back again. */
  drain(): void {
    this.blocked = false;
    while (!this.blocked && !this.done && this.pending > 0) {
      const f = this.queue[this.head]!;
      this.queue[this.head++] = "";
      this.write(f);
    }
    if (this.head > 0 && (this.pending === 0 || this.head > 1024)) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  close(code: number, reason: string): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    this.head = 0;
    this.outlet.close(code, reason);
  }

  /** The socket closed by itself: nothing more is sent. */
  detach(): void {
    this.done = true;
    this.queue.length = 0;
    this.head = 0;
  }

  private write(frame: string): boolean {
    const r = this.outlet.send(frame);
    if (r === "closed") {
      this.detach();
      return false;
    }
    this.counters.sent();
    if (r === "backpressure") this.blocked = true;
    return true;
  }
}
