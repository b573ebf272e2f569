/**
 * The order of the questions of one fanned-out read over nodes that share a lake
 * (docs/ARCHITECTURE.md "Coordinator over several nodes", "Shared lakes"): of the askers of one lake
 * (this process's lake, or the first node of it) one reads the lake's files and its own buffer, the
 * others their buffer only. A node's flush commits rows into the shared files and then drops them
 * from its buffer; read concurrently, the files could be read before that commit and the buffer
 * after it, and the rows would be in neither answer. So the files reader of a lake starts only when
 * every buffer-only ask of that lake has answered (or failed): a row leaving a buffer meanwhile is
 * then in the files read, at worst in both answers (one row: the merge keeps one per uuid).
 *
 * When the files reader of a lake fails (its node died after the metadata check that chose it, kept
 * 5 s), the lake's files were read by no one: every flushed row of every node of that lake was
 * missing although the other nodes answered. Then one buffer-only node of that lake that answered
 * is asked again for its files and buffer (`whole`), after its buffer: the answer is partial (the
 * failed node is named) but lacks only what was in that node's own buffer.
 */
export interface LakeAsk<T> {
  /** The lake the asker reads; undefined: a lake of its own (no order to keep). */
  lakeId: string | undefined;
  bufferOnly: boolean;
  run: () => Promise<T>;
  /** A buffer-only ask made whole: the same node asked for the files and its buffer. */
  whole?: () => Promise<T>;
}

/** Starts every ask, each files reader after the buffer-only asks of its lake; the results in the order of `asks`. */
export function runInLakeOrder<T>(asks: readonly LakeAsk<T>[]): Promise<T>[] {
  const buffers = new Map<string, Promise<unknown>[]>();
  const out = asks.map((a) => {
    if (!a.bufferOnly) return undefined;
    const p = a.run();
    if (a.lakeId !== undefined) buffers.set(a.lakeId, [...(buffers.get(a.lakeId) ?? []), p]);
    return p;
  });
  return asks.map((a, i) => {
    const started = out[i];
    if (started) return started;
    const before = a.lakeId === undefined ? [] : (buffers.get(a.lakeId) ?? []);
    return before.length === 0 ? a.run() : Promise.allSettled(before).then(() => a.run());
  });
}

/** `outcomes` of `asks`, a buffer-only one replaced by its `whole` ask for each lake whose files reader did not answer (`ok`). */
export async function withFilesFailover<T>(
  asks: readonly LakeAsk<T>[],
  outcomes: readonly T[],
  ok: (o: T) => boolean,
): Promise<T[]> {
  const unread = new Set(
    asks.flatMap((a, i) => (a.lakeId !== undefined && !a.bufferOnly && !ok(outcomes[i]!) ? [a.lakeId] : [])),
  );
  const taken = new Set<string>();
  return await Promise.all(
    outcomes.map(async (o, i) => {
      const a = asks[i]!;
      if (!a.bufferOnly || a.lakeId === undefined || !a.whole || !unread.has(a.lakeId) || taken.has(a.lakeId) || !ok(o))
        return o;
      taken.add(a.lakeId);
      const again = await a.whole();
      return ok(again) ? again : o;
    }),
  );
}
