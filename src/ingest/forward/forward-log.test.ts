import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ForwardLog } from "./forward-log.ts";

const record = (text: string) => {
  const body = new TextEncoder().encode(text);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
};
const open = (dir: string) => new ForwardLog({ dir, maxBacklogBytes: 1 << 20, segmentBytes: 1 << 16, onDrop: () => {} });

test('a log reopened with every packet acknowledged sends what is appended next (docs/DEPLOY.md "Forward log")', () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-fwd-log-"));
  try {
    const first = open(dir);
    for (let i = 0; i < 10; i++) first.append(record(`p${i}`), 1);
    const b = first.read(100, 1 << 20)!;
    expect([b.first, b.last]).toEqual([1, 10]);
    first.ack(b, 10);
    expect(first.backlogPackets()).toBe(0);
    // A restart (kill -9 or not): the tail segment is not full and is continued.
    const second = open(dir);
    expect(second.read(100, 1 << 20)).toBeUndefined();
    for (let i = 10; i < 15; i++) second.append(record(`p${i}`), 1);
    expect(second.backlogPackets()).toBe(5);
    const next = second.read(100, 1 << 20)!;
    expect([next.first, next.last, next.count]).toEqual([11, 15, 5]);
    second.ack(next, 15);
    // And once more, after those were acknowledged too.
    const third = open(dir);
    third.append(record("p15"), 1);
    expect([third.read(100, 1 << 20)?.first, third.read(100, 1 << 20)?.last]).toEqual([16, 16]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
