/**
 * Records the central refuses for good (docs/DEPLOY.md "Where the central keeps an edge's
 * position"): an edge without an auth key forwards packets the central, with
 * ingest.hep.auth_key, refuses (counted as auth_failed). The central's committed position still
 * moves over them, so the edge's log drains, also when whole batches bring no row at all; packets
 * it takes among them are stored exactly once, a full write buffer on the central (503) being
 * sent again, never skipped.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";

const TOKEN = "forward-refused-central-token-0123456789";
const KEY = "forward-refused-auth-key";

/** An INVITE of Call-ID `callId`, with the central's auth key or without one (refused there). */
const packet = (callId: string, i: number, withKey: boolean) =>
  encodeHep3({
    srcIp: "10.9.0.1",
    dstIp: "10.9.0.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: Date.now() * 1000 + i,
    protoType: 1,
    captureId: 9,
    payload: invite({ callId, from: "rfa", to: "rfb" }),
    ...(withKey ? { authKey: KEY } : {}),
  });

async function sendToEdge(e: TestAppliance, packets: Uint8Array[]): Promise<void> {
  const res = await fetch(`${e.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
  expect(res.status).toBe(202);
  expect(((await res.json()) as { accepted: number }).accepted).toBe(packets.length);
}

const acked = (dir: string) => {
  try {
    return Number(readFileSync(join(dir, "forward", "acked"), "utf8"));
  } catch {
    return 0;
  }
};

test("batches the central refuses for good are committed over: the edge's log drains, the taken packets are stored once", async () => {
  await using dc = tempDir("svc-fwd-refused-central-");
  await using de = tempDir("svc-fwd-refused-edge-");
  await using c = await startTestAppliance(dc.path, {
    node: { http_server: { token: TOKEN } },
    ingest: { hep: { auth_key: KEY } },
    storage: { lakehouse: { max_buffered_rows: 1000 } },
  });
  await using e = await startTestAppliance(de.path, {
    ingest: { forward: { enable: true, url: c.app.nodeUrl!, token: TOKEN, timeout_sec: 1, batch_packets: 300 } },
  });
  const sender = e.app.relay!.senderId()!;
  const position = async () =>
    (await (
      await fetch(`${c.app.nodeUrl}/api/v1/forward?sender=${sender}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { last: number; committed: number };

  // Only refused packets: no row on the central, yet its position is committed and the edge drains.
  await sendToEdge(
    e,
    Array.from({ length: 30 }, (_, i) => packet(`rf-bad-${i}`, i, false)),
  );
  await waitFor(
    "the refused packets committed over on the central",
    async () => (await c.app.lake!.writerMark(`forward:${sender}`)) === 30 || undefined,
    15_000,
  );
  await waitFor("the edge's log acknowledged up to them", () => acked(de.path) === 30 || undefined, 10_000);
  expect(c.app.metrics.render()).toMatch(/^svc_hep_packets_dropped_total\{[^}]*reason="auth_failed"[^}]*\} 30$/m);

  // Mixed batches (a third refused) over a small write buffer, then refused batches again at the end.
  const mixed = Array.from({ length: 1200 }, (_, i) => packet(`rf-${i}`, i, i % 3 !== 0));
  await sendToEdge(e, mixed);
  await sendToEdge(
    e,
    Array.from({ length: 30 }, (_, i) => packet(`rf-tail-${i}`, i, false)),
  );
  // The position the edge hears (not the catalog mark, which shows before the rows are queryable).
  await waitFor(
    "every packet committed on the central",
    async () => (await position()).committed === 1260 || undefined,
    20_000,
  );
  await waitFor("the edge's log acknowledged", () => acked(de.path) === 1260 || undefined, 10_000);
  const r = await c.app.lake!.query(
    "SELECT count(*) AS n, count(DISTINCT session_id) AS calls, count(DISTINCT uuid) AS u FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'rf-%'",
  );
  expect(r.rows[0]).toEqual({ n: 800, calls: 800, u: 800 });
});
