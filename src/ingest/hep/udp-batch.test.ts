/**
 * The recvmmsg socket against real UDP sockets on loopback: bytes, sizes, senders, batches larger
 * than one call, dual stack, bind errors, and memory the kernel writes surviving the collector.
 */
import { describe, expect, test } from "bun:test";
import { waitFor } from "../../../test/harness.ts";
import { BATCH, batchReceiveAvailable, openBatchSocket, type BatchSocket } from "./udp-batch.ts";

const linux = batchReceiveAvailable();

/** Every datagram waiting now or within `ms`, as copies with their senders (what came when it times out). */
async function drain(s: BatchSocket, expected: number, ms = 3000): Promise<{ bytes: Uint8Array; from: string }[]> {
  const out: { bytes: Uint8Array; from: string }[] = [];
  const counts: number[] = [];
  const take = () => {
    const n = s.receive();
    counts.push(n);
    for (let i = 0; i < n; i++) out.push({ bytes: s.datagram(i).slice(), from: s.sender(i) });
    return out.length >= expected || n < 0 || undefined;
  };
  // On a timeout the caller's assertions show what did arrive.
  await waitFor(`${expected} datagrams`, take, ms, 2).catch(() => {});
  expect(counts.filter((n) => n < 0 || n > BATCH)).toEqual([]);
  return out;
}

const pattern = (len: number, seed: number) => Uint8Array.from({ length: len }, (_, i) => (i * 31 + seed) & 255);

test("batch receive is available on 64-bit Linux (elsewhere the listener uses Bun's socket)", () => {
  const expected = process.platform === "linux" && (process.arch === "x64" || process.arch === "arm64");
  expect(linux).toBe(expected);
  if (!linux)
    console.log(`skip: no recvmmsg batch receive on ${process.platform}/${process.arch}; the tests below did not run`);
});

describe.skipIf(!linux)("UDP batch receive (recvmmsg)", () => {
  test("datagrams of every size arrive whole, in order, with their sender; an empty socket answers 0", async () => {
    const s = openBatchSocket("127.0.0.1", 0)!;
    try {
      expect(s.port).toBeGreaterThan(0);
      expect(s.receive()).toBe(0);
      const client = await Bun.udpSocket({ hostname: "127.0.0.1" });
      // 0 bytes, one byte, a typical packet, the largest UDP payload (65 507 bytes).
      const sizes = [0, 1, 872, 1500, 9000, 65507];
      sizes.forEach((n, k) => client.send(pattern(n, k), s.port, "127.0.0.1"));
      const got = await drain(s, sizes.length);
      expect(got.map((g) => g.bytes.length)).toEqual(sizes);
      got.forEach((g, k) => expect(Buffer.compare(g.bytes, pattern(sizes[k]!, k))).toBe(0));
      expect(new Set(got.map((g) => g.from))).toEqual(new Set(["127.0.0.1"]));
      expect(s.receive()).toBe(0);
      client.close();
    } finally {
      s.close();
    }
  });

  test("more datagrams than one call takes come in several batches, none lost or repeated", async () => {
    const s = openBatchSocket("127.0.0.1", 0)!;
    try {
      const client = await Bun.udpSocket({ hostname: "127.0.0.1" });
      // Two full calls and a rest; small enough for the default receive buffer (≈ 1 KB of it per datagram).
      const total = BATCH * 2 + 7;
      for (let i = 0; i < total; i++) {
        const d = new Uint8Array(8);
        new DataView(d.buffer).setUint32(0, i);
        client.send(d, s.port, "127.0.0.1");
      }
      const got = await drain(s, total);
      expect(got.map((g) => new DataView(g.bytes.buffer).getUint32(0))).toEqual(
        Array.from({ length: total }, (_, i) => i),
      );
      client.close();
    } finally {
      s.close();
    }
  });

  test("the receive buffers stay valid through garbage collection", async () => {
    const s = openBatchSocket("127.0.0.1", 0)!;
    try {
      // Churn and full collections: memory only the kernel points at must not be freed or moved.
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 20_000; i++) void new Uint8Array(64 + (i & 511));
        Bun.gc(true);
      }
      const client = await Bun.udpSocket({ hostname: "127.0.0.1" });
      for (let i = 0; i < 3; i++) client.send(pattern(700, i), s.port, "127.0.0.1");
      const got = await drain(s, 3);
      expect(got.map((g) => g.bytes.length)).toEqual([700, 700, 700]);
      got.forEach((g, i) => expect(Buffer.compare(g.bytes, pattern(700, i))).toBe(0));
      client.close();
    } finally {
      s.close();
    }
  });

  test('"::" takes IPv4 and IPv6 senders; an IPv4 sender reads as a dotted quad', async () => {
    const s = openBatchSocket("::", 0)!;
    try {
      const v4 = await Bun.udpSocket({ hostname: "127.0.0.1" });
      v4.send(pattern(10, 1), s.port, "127.0.0.1");
      const v4got = await drain(s, 1);
      expect(v4got.map((g) => g.from)).toEqual(["127.0.0.1"]);
      v4.close();
      let v6: Bun.udp.Socket<"buffer">;
      try {
        v6 = await Bun.udpSocket({ hostname: "::1" });
      } catch {
        console.log("skip: no IPv6 loopback here (::1), the IPv6 sender case did not run");
        return;
      }
      v6.send(pattern(10, 2), s.port, "::1");
      const v6got = await drain(s, 1);
      expect(v6got.map((g) => g.from)).toEqual(["::1"]);
      expect(Buffer.compare(v6got[0]!.bytes, pattern(10, 2))).toBe(0);
      v6.close();
    } finally {
      s.close();
    }
  });

  test("a port in use is a clear error; host names are left to Bun's socket; a closed socket frees its port", () => {
    const s = openBatchSocket("127.0.0.1", 0)!;
    expect(() => openBatchSocket("127.0.0.1", s.port)).toThrow(
      /cannot bind UDP 127\.0\.0\.1:\d+: address already in use/,
    );
    expect(openBatchSocket("localhost", 0)).toBeUndefined();
    const port = s.port;
    s.close();
    expect(s.receive()).toBeLessThan(0);
    const again = openBatchSocket("127.0.0.1", port)!;
    expect(again.port).toBe(port);
    again.close();
  });

  test("a socket of a shared port gives each datagram's kernel receive time, in the order sent; an unshared one gives none", async () => {
    const shared = openBatchSocket("127.0.0.1", 0, { size: 2, first: true })!;
    const alone = openBatchSocket("127.0.0.1", 0)!;
    const tx = await Bun.udpSocket({});
    try {
      const before = Date.now();
      for (let i = 0; i < 40; i++) tx.send(pattern(20, i), shared.port, "127.0.0.1");
      tx.send(pattern(20, 0), alone.port, "127.0.0.1");
      const times: number[] = [];
      await waitFor(
        "40 datagrams",
        () => {
          const n = shared.receive();
          for (let i = 0; i < n; i++) times.push(shared.receivedAtMs(i) ?? Number.NaN);
          return times.length >= 40 || undefined;
        },
        3000,
        2,
      );
      const after = Date.now();
      expect(times.filter((t) => !(t >= before - 1 && t <= after + 1))).toEqual([]);
      // In the order sent: one sender's datagrams never get an earlier kernel time than the one
      // before (two can share a time as a double of epoch ms: 0.2 µs apart on a loaded machine).
      expect(times.filter((t, i) => i > 0 && t < times[i - 1]!)).toEqual([]);
      expect(new Set(times).size).toBeGreaterThan(1);
      await waitFor("the unshared datagram", () => alone.receive() === 1 || undefined, 3000, 2);
      expect(alone.receivedAtMs(0)).toBeUndefined();
    } finally {
      tx.close();
      shared.close();
      alone.close();
    }
  });
});
