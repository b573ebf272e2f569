/**
 * The capture time of loadgen's HEP copies (docs/LOADGEN.md "HEP mirroring"): microseconds since
 * the epoch, strictly increasing across every copy of the process, so the copies of one call sort
 * in the order loadgen sent and received its messages (a ladder is drawn in time order). The wall
 * clock has millisecond steps and several messages of one call go out within one millisecond;
 * `performance.timeOrigin + performance.now()` has sub-millisecond precision and never goes back
 * while the process runs, and a reading not past the last stamp is moved 1 µs past it.
 */
export class MonotonicMicros {
  private last = 0;

  /** `nowUs` reads the clock in µs since the epoch (a test passes one of its own). */
  constructor(
    private readonly nowUs: () => number = () => Math.floor((performance.timeOrigin + performance.now()) * 1000),
  ) {}

  /** The next stamp: now, or 1 µs after the previous stamp when the clock has not moved past it. */
  next(): number {
    const now = this.nowUs();
    this.last = now > this.last ? now : this.last + 1;
    return this.last;
  }
}

/** One clock for the whole process: a client and a server engine run in one process order their copies together. */
export const hepClock = new MonotonicMicros();
