/**
 * The order of the questions of one fanned-out read over nodes that share a lake
 * (docs/ARCHITECTURE.md "Coordinator over several nodes", "Shared lakes"): of the askers of one lake
 * (this process's lake, or the first node of it) one reads the lake's files and its own buffer, the
 * others their buffer only. A node's flush commits rows into the shared files and then drops them
 * from its buffer; read concurrently, the files could be read before that commit and the buffer
 * after it, and the rows would be in neither answer. So the files reader of a lake starts only when
 * every buffer-only ask of that lake has answered (or failed): a row leaving a buffer meanwhile is
 * then in the files read, at worst in both answers (one row: the merge keeps one per uuid).
 */
export interface LakeAsk<T> {
  /** The lake the asker reads; undefined: a lake of its own (no order to keep). */
  lakeId: string | undefined;
  bufferOnly: boolean;
  run: () => Promise<T>;
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
