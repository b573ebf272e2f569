import { expect, test } from "bun:test";
import { runInLakeOrder, withFilesFailover } from "./lake-order.ts";

test("a lake's files reader starts after its buffer-only asks have answered; other lakes do not wait", async () => {
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const ask = (name: string, lakeId: string | undefined, bufferOnly: boolean) => ({
    lakeId,
    bufferOnly,
    run: () => {
      log.push(`start ${name}`);
      return new Promise<string>((resolve) => gates.set(name, () => resolve(name)));
    },
  });
  const results = runInLakeOrder([
    ask("files-a", "a", false),
    ask("buffer-a1", "a", true),
    ask("own", undefined, false),
    ask("buffer-a2", "a", true),
    ask("files-b", "b", false),
  ]);
  expect(log).toEqual(["start buffer-a1", "start buffer-a2", "start own", "start files-b"]);
  gates.get("buffer-a1")!();
  await Promise.resolve();
  expect(log).not.toContain("start files-a");
  gates.get("buffer-a2")!();
  await new Promise((r) => setImmediate(r));
  expect(log.at(-1)).toBe("start files-a");
  for (const g of ["files-a", "own", "files-b"]) gates.get(g)!();
  expect(await Promise.all(results)).toEqual(["files-a", "buffer-a1", "own", "buffer-a2", "files-b"]);
});

test("a lake whose files reader failed: its first buffer-only ask that answered is made whole; other lakes untouched", async () => {
  const made: string[] = [];
  const ask = (name: string, lakeId: string | undefined, bufferOnly: boolean) => ({
    lakeId,
    bufferOnly,
    run: async () => name,
    whole: async () => {
      made.push(name);
      return `${name}+files`;
    },
  });
  const asks = [
    ask("a-files", "a", false),
    ask("a-buf1", "a", true),
    ask("a-buf2", "a", true),
    ask("b-files", "b", false),
    ask("b-buf", "b", true),
  ];
  const outcomes = ["failed", "failed", "a-buf2", "b-files", "b-buf"];
  expect(await withFilesFailover(asks, outcomes, (o) => o !== "failed")).toEqual([
    "failed",
    "failed",
    "a-buf2+files",
    "b-files",
    "b-buf",
  ]);
  expect(made).toEqual(["a-buf2"]);
});
