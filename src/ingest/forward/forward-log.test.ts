import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
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
const open = (dir: string) =>
  new ForwardLog({ dir, maxBacklogBytes: 1 << 20, segmentBytes: 1 << 16, onDrop: () => {} });

test('a log reopened with every packet acknowledged sends what is appended next (docs/DEPLOY.md "Forward log")', () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-fwd-log-"));
  try {
    const first = open(dir);
    for (let i = 0; i < 10; i++) first.append(record(`p${i}`), 1);
    const b = first.read(100, 1 << 20)!;
    expect([b.first, b.last]).toEqual([1, 10]);
    first.ack(b, 10, 10);
    expect(first.backlogPackets()).toBe(0);
    // A restart (kill -9 or not): the tail segment is not full and is continued.
    const second = open(dir);
    expect(second.read(100, 1 << 20)).toBeUndefined();
    for (let i = 10; i < 15; i++) second.append(record(`p${i}`), 1);
    expect(second.backlogPackets()).toBe(5);
    const next = second.read(100, 1 << 20)!;
    expect([next.first, next.last, next.count]).toEqual([11, 15, 5]);
    second.ack(next, 15, 15);
    // And once more, after those were acknowledged too.
    const third = open(dir);
    third.append(record("p15"), 1);
    expect([third.read(100, 1 << 20)?.first, third.read(100, 1 << 20)?.last]).toEqual([16, 16]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("one hand-over larger than the cap is split into segments: the cap holds and the seqs run on", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-fwd-log-"));
  try {
    let dropped = 0;
    const log = new ForwardLog({
      dir,
      maxBacklogBytes: 1 << 20,
      segmentBytes: 1 << 16,
      onDrop: (n) => void (dropped += n),
    });
    // 3 MiB in one chunk (a slow main thread takes several hand-overs at once): 3 072 records of 1 KiB.
    const packets = Array.from({ length: 3072 }, (_, i) =>
      record(`${String(i).padStart(8, "0")}${"x".repeat(1016 - 8)}`),
    );
    const chunk = new Uint8Array(packets.reduce((a, p) => a + p.length, 0));
    packets.reduce((at, p) => (chunk.set(p, at), at + p.length), 0);
    log.append(chunk, packets.length);
    const sizes = readdirSync(dir)
      .filter((f) => f.endsWith(".seg"))
      .map((f) => statSync(join(dir, f)).size);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1 << 20);
    expect(Math.max(...sizes)).toBeLessThanOrEqual((1 << 16) + 1020);
    // What was not dropped is the newest packets, in order, from the seq after the last dropped one.
    expect(dropped + log.backlogPackets()).toBe(3072);
    const b = log.read(10, 1 << 20)!;
    expect(b.first).toBe(dropped + 1);
    expect(new TextDecoder().decode(b.body.subarray(4, 12))).toBe(String(dropped).padStart(8, "0"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('held but not committed: a restart sends again from the committed seq; a lower answer moves the cursor back (docs/DEPLOY.md "Forward protocol")', () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-fwd-log-held-"));
  try {
    const log = open(dir);
    for (let i = 0; i < 10; i++) log.append(record(`p${i}`), 1);
    const b = log.read(4, 1 << 20)!;
    expect([b.first, b.last]).toEqual([1, 4]);
    log.ack(b, 4, 0);
    expect(log.uncommitted()).toBe(4);
    // The central restarted: it holds only up to 2 now; the cursor goes back to 3.
    const c = log.read(4, 1 << 20)!;
    expect([c.first, c.last]).toEqual([5, 8]);
    log.ack(c, 2, 2);
    expect(log.read(100, 1 << 20)?.first).toBe(3);
    const all = log.read(100, 1 << 20)!;
    log.ack(all, 10, 2);
    expect(log.read(100, 1 << 20)).toBeUndefined();
    // An idle edge's question: the central restarted again and holds up to 5.
    log.position(5, 2);
    expect(log.read(100, 1 << 20)?.first).toBe(6);
    log.close();
    const again = open(dir);
    expect(again.read(100, 1 << 20)?.first).toBe(3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
