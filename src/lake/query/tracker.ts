/** Queries in flight by start time (epoch ms → count): a flushed spool file stays until the oldest ends. */
export class QueryTracker {
  private readonly running = new Map<number, number>();

  async track<T>(run: () => Promise<T>): Promise<T> {
    const at = Date.now();
    this.running.set(at, (this.running.get(at) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const n = (this.running.get(at) ?? 1) - 1;
      if (n > 0) this.running.set(at, n);
      else this.running.delete(at);
    }
  }

  oldestStartMs(): number | undefined {
    let oldest: number | undefined;
    for (const at of this.running.keys()) if (oldest === undefined || at < oldest) oldest = at;
    return oldest;
  }
}
