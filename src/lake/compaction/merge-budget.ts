/**
 * What one merge of a table may hold after a merge of it ran out of memory: half of the piece
 * that failed, kept for 2^lowered cycles (at most MAX_BACKOFF_CYCLES), then the configured budget
 * is tried again (docs/ARCHITECTURE.md "Compaction memory"). The Compactor keeps one per lake and
 * counts its cycles here.
 */
interface LearnedCap {
  sortBytes: number;
  lowered: number;
  untilCycle: number;
}
const MAX_BACKOFF_CYCLES = 64;

export class MergeBudget {
  private readonly learned = new Map<string, LearnedCap>();
  private cycle = 0;

  /** `maxSortBytes`: the configured budget, from compaction.memory_limit. */
  constructor(private readonly maxSortBytes: number) {}

  /** A compaction cycle ended: back-offs count down. */
  nextCycle(): void {
    this.cycle++;
  }

  /** The table's merge budget: the configured one, or a lowered one while its back-off lasts. */
  sortBytesFor(key: string): number {
    const l = this.learned.get(key);
    return l && this.cycle < l.untilCycle ? Math.min(this.maxSortBytes, l.sortBytes) : this.maxSortBytes;
  }

  /** After an out-of-memory error on a piece of `cost`: merges of the table stay below half of it for a while. */
  lower(key: string, cost: number): void {
    const prev = this.learned.get(key);
    const lowered = Math.min((prev?.lowered ?? 0) + 1, Math.log2(MAX_BACKOFF_CYCLES));
    const sortBytes = Math.floor(
      Math.min(cost, prev && this.cycle < prev.untilCycle ? prev.sortBytes : Number.POSITIVE_INFINITY) / 2,
    );
    this.learned.set(key, { sortBytes, lowered, untilCycle: this.cycle + 2 ** lowered });
  }
}
