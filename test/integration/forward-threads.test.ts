/**
 * A central with HEP ingest threads decodes forward batches there (docs/DEPLOY.md "Forward
 * protocol"), as it does HEP over HTTP: the thread's packet counter
 * (svc_hep_thread_packets_total) counts every forwarded packet, replays are still dropped,
 * refused packets counted and acknowledged, and the rows are committed with the sender's mark,
 * each once, none through the spool before that commit.
 */
import { expect, test } from "bun:test";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { forwardPacket } from "../peers/forward-packet.ts";

const TOKEN = "forward-threads-central-token-0123456789";

const threadPackets = (a: TestAppliance) => {
  const line = a.app.metrics
    .render()
    .split("\n")
    .find((l) => l.startsWith('svc_hep_thread_packets_total{thread="0"} '));
  return line ? Number(line.split(" ")[1]) : Number.NaN;
};

test("forward batches are decoded on the central's ingest thread, each packet once", async () => {
  await using dc = tempDir("svc-fwd-threads-");
  await using c = await startTestAppliance(dc.path, {
    node: { http_server: { token: TOKEN } },
    ingest: { hep: { threads: 1 } },
  });
  expect(c.app.ingest?.thread?.count).toBe(1);
  /** Records from..to; those in `refused` are not HEP (refused for good on the central). */
  const body = (from: number, to: number, refused: number[] = []) => {
    const parts: Uint8Array[] = [];
    for (let i = from; i <= to; i++) {
      const p = refused.includes(i) ? new TextEncoder().encode(`not a HEP packet ${i}`) : forwardPacket(`ft-${i}`, i);
      const len = Buffer.alloc(4);
      len.writeUInt32BE(p.length);
      parts.push(len, p);
    }
    return Bun.gzipSync(Buffer.concat(parts));
  };
  const post = async (from: number, to: number, refused: number[] = []) => {
    const res = await fetch(`${c.app.nodeUrl}/api/v1/forward`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-encoding": "gzip",
        "x-svc-forward-sender": "edge-t",
        "x-svc-forward-first": String(from),
        "x-svc-forward-last": String(to),
      },
      body: body(from, to, refused),
    });
    expect(res.status).toBe(200);
    return await res.json();
  };
  expect(await post(1, 10)).toMatchObject({ last: 10, accepted: 10, duplicates: 0, rejected: {} });
  // A replay overlapping the held position: only its new tail is decoded.
  expect(await post(6, 15)).toMatchObject({ last: 15, accepted: 5, duplicates: 5 });
  expect(await post(16, 20, [17, 19])).toMatchObject({
    last: 20,
    accepted: 3,
    duplicates: 0,
    rejected: { bad_magic: 2 },
  });
  // Nothing held is queryable before its commit: the rows did not go through the spool.
  await waitFor("the thread's counters handed over", () => threadPackets(c) === 20 || undefined, 10_000);
  // The position the edge hears is committed after the rows are queryable (the catalog mark alone may show first).
  const position = async () =>
    (await (
      await fetch(`${c.app.nodeUrl}/api/v1/forward?sender=edge-t`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { committed: number };
  await waitFor(
    "the held rows committed with the mark",
    async () => (await position()).committed === 20 || undefined,
    15_000,
  );
  expect(await c.app.lake!.writerMark("forward:edge-t")).toBe(20);
  const r = await c.app.lake!.query(
    "SELECT count(*) AS n, count(DISTINCT session_id) AS calls, count(DISTINCT uuid) AS u FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'ft-%'",
  );
  expect(r.rows[0]).toEqual({ n: 18, calls: 18, u: 18 });
});
