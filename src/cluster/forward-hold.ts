/**
 * The rows the central holds from edges' forward batches, and the senders' positions they bring,
 * committed together (docs/DEPLOY.md "Where the central keeps an edge's position"): every flush
 * interval or batch_size rows, in ONE catalog transaction with each sender's writer mark
 * (Lake.commitRows). The forward receiver (src/cluster/forward-receiver.ts) decodes the batches and
 * adds their rows here; rows held but not committed count only while this process lives.
 */
import { errorMessage, type Logger, type TableDef } from "../core/index.ts";
import type { Lake } from "../lake/index.ts";

/** A held batch's rows (CSV per table) waiting for the next group commit. */
export interface HeldRows {
  key: string;
  bytes: Uint8Array;
  rows: number;
  columns: number;
  span?: { min: number; max: number };
  layout?: TableDef;
}

export interface ForwardHoldOptions {
  /** Held rows are committed at this many rows (storage.lakehouse.batch_size) … */
  batchSize: number;
  /** … or once the oldest waited this long (storage.lakehouse.flush_interval_sec). */
  flushIntervalMs: number;
  logger: Logger;
  /** The writer mark of a sender's stream (`forward:<stream>`). */
  markKey: (stream: string) => string;
  /** After a commit: the stream's rows up to `watermark` are in the lake with its mark. */
  committed: (stream: string, watermark: number) => Promise<void>;
}

export class ForwardHold {
  /** Rows held, not yet committed, oldest first, and the senders' held positions they bring. */
  private held: HeldRows[] = [];
  private heldRows = 0;
  private heldSinceMs = 0;
  private readonly marks = new Map<string, number>();
  /** Rows of the commit under way (still held: they count against the buffer bound). */
  private committingRows = 0;
  private committing: Promise<void> | undefined;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly lake: Lake,
    private readonly opts: ForwardHoldOptions,
  ) {
    this.timer = setInterval(
      () => {
        if ((this.held.length > 0 || this.marks.size > 0) && Date.now() - this.heldSinceMs >= opts.flushIntervalMs)
          void this.commit();
      },
      Math.min(1000, opts.flushIntervalMs),
    );
    this.timer.unref?.();
  }

  /** Rows held or being committed: the buffer bound counts them. */
  get pending(): number {
    return this.heldRows + this.committingRows;
  }

  /**
   * A batch's rows and its stream's new held position (rows may be none: every record refused for
   * good moves the position alone); commits once batch_size rows are held.
   */
  add(stream: string, position: number, rows: readonly HeldRows[]): void {
    // Rows or a position to commit from now on.
    if (this.held.length === 0 && this.marks.size === 0) this.heldSinceMs = Date.now();
    for (const b of rows) {
      this.held.push(b);
      this.heldRows += b.rows;
    }
    this.marks.set(stream, position);
    if (this.heldRows >= this.opts.batchSize) void this.commit();
  }

  /** Stops the interval's commits and commits what is held. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.commit();
  }

  /**
   * Commits every held row with the senders' marks in one transaction (Lake.commitRows). On failure
   * the rows stay held and the next tick tries again; the edges keep their logs until `committed`.
   */
  commit(): Promise<void> {
    if (this.committing)
      return this.committing.then(() => (this.held.length > 0 || this.marks.size > 0 ? this.commit() : undefined));
    if (this.held.length === 0 && this.marks.size === 0) return Promise.resolve();
    const rows = this.held;
    const count = this.heldRows;
    const marks = new Map(this.marks);
    this.held = [];
    this.heldRows = 0;
    this.committingRows = count;
    const run = (async () => {
      try {
        // No rows (every record since the last commit refused for good): the marks alone, so the
        // edges' logs drain. Safe: every row below them is committed (a failed commit puts its rows
        // back into `held`, so no rows means none waits), and a retryable record (a full buffer)
        // never moves a mark (docs/DEPLOY.md "Where the central keeps an edge's position").
        await this.lake.commitRows(
          rows,
          [...marks].map(([sender, watermark]) => ({ writerKey: this.opts.markKey(sender), watermark })),
        );
        for (const [sender, w] of marks) {
          if (this.marks.get(sender) === w) this.marks.delete(sender);
          await this.opts.committed(sender, w);
        }
      } catch (e) {
        this.held = rows.concat(this.held);
        this.heldRows += count;
        if (this.held.length > 0) this.heldSinceMs = Date.now();
        this.opts.logger.warn("committing forwarded rows failed; they stay held and are tried again", {
          rows: count,
          error: errorMessage(e),
        });
      } finally {
        this.committingRows = 0;
        this.committing = undefined;
      }
    })();
    this.committing = run;
    return run;
  }
}
