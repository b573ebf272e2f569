/**
 * Forwarding per kind (docs/DEPLOY.md "Forward log"): an edge with ingest.forward.hep and otlp
 * false and line_protocol on takes HEP, line protocol and OTLP into its own lake, but keeps a forward
 * log of line protocol only and sends only that: no HEP or OTLP log on its disk, no HEP or OTLP
 * position on the central, and the central holds the line-protocol rows.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { forwardPacket } from "../peers/forward-packet.ts";

const TOKEN = "forward-kinds-central-token-0123456789";

async function count(a: TestAppliance, key: string, sql: string): Promise<number> {
  if (!a.app.lake!.table(key)) return 0;
  return Number((await a.app.lake!.query(sql)).rows[0]!.n);
}

test("an edge with HEP and OTLP forwarding off forwards line protocol only and keeps no other log", async () => {
  await using dc = tempDir("svc-fwd-kinds-central-");
  await using de = tempDir("svc-fwd-kinds-edge-");
  await using c = await startTestAppliance(dc.path, { node: { http_server: { token: TOKEN } } });
  await using e = await startTestAppliance(de.path, {
    ingest: {
      line_protocol: { enable: true },
      otlp: { enable: true },
      forward: { enable: true, url: c.app.nodeUrl!, token: TOKEN, timeout_sec: 1, hep: false, otlp: false },
    },
  });
  // HEP, OTLP and line protocol all accepted by the edge.
  const hep = Buffer.concat(Array.from({ length: 5 }, (_, i) => forwardPacket(`fk-${i}`, i)));
  const h = await fetch(`${e.app.nodeUrl}/api/v1/hep`, { method: "POST", body: hep });
  expect(h.status).toBe(202);
  const logs = {
    resourceLogs: [
      { resource: { attributes: [] }, scopeLogs: [{ logRecords: [{ body: { stringValue: "fk-log" } }] }] },
    ],
  };
  const o = await fetch(`${e.app.otlp!.httpUrl()}/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(logs),
  });
  expect(o.status).toBe(200);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${e.app.lineProtocol!.url()}/api/v2/write?bucket=fk&precision=ns`, {
      method: "POST",
      body: `cpu,host=h${i} usage=${i} ${1_790_000_000_000_000_000n + BigInt(i)}`,
    });
    expect(res.status).toBe(204);
  }
  const sender = e.app.relay!.senderId()!;
  await waitFor(
    "the line-protocol position committed on the central",
    async () => (await c.app.lake!.writerMark(`forward:${sender}:line_protocol`)) === 3 || undefined,
    15_000,
  );
  await e.app.lake!.sync();
  // The edge stored everything itself.
  expect(
    await count(
      e,
      "main.hep_proto_1_call",
      "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'fk-%'",
    ),
  ).toBe(5);
  expect(
    await count(e, "main.otlp_logs", "SELECT count(*) AS n FROM svc_lake.main.otlp_logs WHERE body = 'fk-log'"),
  ).toBe(1);
  // The central got the line protocol, and nothing of the other two.
  // The mark can be committed a moment before the central's lake lists the new table: wait for the rows.
  await waitFor(
    "the line protocol on the central",
    async () => (await count(c, "fk.cpu", "SELECT count(*) AS n FROM svc_lake.fk.cpu")) === 3 || undefined,
    15_000,
  );
  expect(await c.app.lake!.writerMark(`forward:${sender}`)).toBe(0);
  expect(await c.app.lake!.writerMark(`forward:${sender}:otlp`)).toBe(0);
  expect(e.app.metrics.sumOf("svc_forward_sent_packets_total")).toBe(3);
  // No HEP log (segments in <state>/forward/ itself) and no OTLP log on the edge's disk.
  const dir = join(de.path, "forward");
  expect(readdirSync(dir).filter((f) => f.endsWith(".seg"))).toEqual([]);
  expect(existsSync(join(dir, "otlp"))).toBe(false);
  expect(readdirSync(join(dir, "line_protocol")).some((f) => f.endsWith(".seg"))).toBe(true);
});

test("forwarding with every kind off is refused at start", async () => {
  await using d = tempDir("svc-fwd-kinds-none-");
  const start = startTestAppliance(d.path, {
    ingest: { forward: { enable: true, url: "http://127.0.0.1:9", hep: false, line_protocol: false, otlp: false } },
  });
  await expect(start).rejects.toThrow(/nothing would be forwarded/);
});
