/**
 * The gate between a flush's commit and the readers that pair the catalog's file list with the
 * writer's buffer (view refresh, scan plans, the lake summary): docs/ARCHITECTURE.md "Write path".
 *
 * A flush commits its Parquet file and then drops the spool files it holds from the buffer. While
 * the catalog port was synchronous both happened in one step of the JS thread, and a reader doing
 * "buffer, then files" synchronously could not land in between. The port is asynchronous now
 * (docs/DUCKLAKE.md "The catalog port"): between a reader's buffer read and its awaited file
 * listing a commit can land, and the reader sees the flushed rows twice (spool file and Parquet
 * file); in the other order, not at all. So the commit step holds the gate exclusively, and such
 * readers hold it shared: readers run side by side, a commit waits for the readers inside to
 * finish, and readers arriving while a commit waits queue behind it (no starvation of flushes).
 */
export class CommitGate {
  #readers = 0;
  #drained: (() => void) | undefined;
  /** Settles when the commit holding or waiting for the gate is done. */
  #commit: Promise<void> | undefined;

  /** Runs `fn` while no commit runs: the buffer and the catalog it reads are one consistent cut. */
  async read<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#commit) await this.#commit;
    this.#readers++;
    try {
      return await fn();
    } finally {
      if (--this.#readers === 0 && this.#drained) this.#drained();
    }
  }

  /** Runs `fn` alone: no reader is inside the gate meanwhile. */
  async commit<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#commit) await this.#commit;
    let release!: () => void;
    this.#commit = new Promise<void>((r) => {
      release = r;
    });
    try {
      if (this.#readers > 0) {
        await new Promise<void>((r) => {
          this.#drained = r;
        });
        this.#drained = undefined;
      }
      return await fn();
    } finally {
      this.#commit = undefined;
      release();
    }
  }
}
