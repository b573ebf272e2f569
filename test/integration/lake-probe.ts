/**
 * The one-table lake of the object-store, retention and flush-failure tests: a table `main.<name>`
 * of a capture time, its date (the partition) and one text column `k`. `ingestProbe` appends rows
 * `r<i>` one microsecond apart and waits until the lake has them (sealed into the spool).
 */
import type { TableDef } from "../../src/core/index.ts";
import type { Lake } from "../../src/lake/index.ts";
import type { ObjectStore } from "../../src/lake/store/index.ts";

export function probeTable(name: string): TableDef {
  return {
    schema: "main",
    name,
    columns: [
      { name: "timestamp", type: "timestamp" },
      { name: "date", type: "date", derived: "date_of:timestamp" },
      { name: "k", type: "varchar" },
    ],
    timeColumn: "timestamp",
    partitionBy: "date",
    sortBy: ["timestamp"],
  };
}

/** Rows `r<from>` … `r<from + n - 1>` into table `key`, at `t0Us + i`. */
export async function ingestProbe(lake: Lake, key: string, from: number, n: number, t0Us: number): Promise<void> {
  for (let i = from; i < from + n; i++)
    lake
      .row(key)!
      .time(t0Us + i)
      .str(`r${i}`)
      .end();
  await lake.sync();
}

/** Every object key of `store`, in listing order. */
export async function storeKeys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list("")) out.push(o.key);
  return out;
}
