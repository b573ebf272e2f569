/**
 * The bytes of OTLP requests being read, inflated and decoded at once, both transports together
 * (docs/OTLP.md "Limits"): `ingest.otlp.max_inflight_bytes`. Decoding multiplies a body many times
 * in memory (a protobuf KeyValue of 16 bytes becomes objects of a few hundred), so without a bound
 * the memory grows with the number of concurrent requests. A request takes its bytes as they
 * arrive (each body chunk, each inflated chunk, the gRPC message) and gives them back when it is
 * answered; one that does not fit is refused at once with 429 / RESOURCE_EXHAUSTED, which OTLP
 * exporters retry after a back-off. Bytes announced but not yet sent are not held, so a slow
 * sender cannot keep the budget from the others with a large Content-Length.
 *
 * A request is always admitted while no other holds bytes, so a lone request up to max_body_bytes
 * (compressed and inflated: twice that) always makes progress whatever the budget.
 */
import type { Gauge } from "../../core/index.ts";

export class InflightBudget {
  private used = 0;

  constructor(
    readonly max: number,
    private readonly gauge?: Gauge,
  ) {}

  /** Bytes held now. */
  inUse(): number {
    return this.used;
  }

  lease(): BudgetLease {
    return new BudgetLease(this);
  }

  /** @internal for BudgetLease: whether `n` more bytes fit beside the other requests' */
  fits(n: number, held: number): boolean {
    return this.used + n <= this.max || this.used - held === 0;
  }

  /** @internal for BudgetLease */
  adjust(by: number, held: number): boolean {
    if (by > 0 && !this.fits(by, held)) return false;
    this.used += by;
    this.gauge?.set(this.used);
    return true;
  }
}

/** The bytes one request holds; `release` is idempotent. */
export class BudgetLease {
  private held = 0;

  constructor(private readonly budget: InflightBudget) {}

  /** Whether `n` more bytes would fit now (nothing taken): to refuse a request before reading it. */
  fits(n: number): boolean {
    return this.budget.fits(n, this.held);
  }

  /** Takes `n` more bytes; false (and nothing taken) when they do not fit beside the other requests'. */
  take(n: number): boolean {
    if (n <= 0) return true;
    if (!this.budget.adjust(n, this.held)) return false;
    this.held += n;
    return true;
  }

  release(): void {
    if (this.held === 0) return;
    this.budget.adjust(-this.held, this.held);
    this.held = 0;
  }
}
