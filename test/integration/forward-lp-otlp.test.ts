/**
 * Store-and-forward of line protocol and OTLP (docs/DEPLOY.md "Forward log", "Forward protocol"):
 * an edge with ingest.forward and both receivers, a central in this process; every request the
 * edge accepted arrives on the central as the same rows (the same tags, fields and times, the
 * same log records with the edge's receive time where they had none), each once, and the central
 * commits each stream's position as the writer mark forward:<sender>:<kind>.
 */
import { expect, test } from "bun:test";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";

const TOKEN = "forward-lp-otlp-central-token-0123456789";

async function lpRows(a: TestAppliance): Promise<string[]> {
  if (!a.app.lake!.table("fw.cpu")) return [];
  const r = await a.app.lake!.query(`SELECT host, usage, epoch_ns("time") AS t FROM svc_lake.fw.cpu ORDER BY host, t`);
  return r.rows.map((x) => `${x.host}|${x.usage}|${x.t}`);
}

async function logRows(a: TestAppliance): Promise<string[]> {
  if (!a.app.lake!.table("main.otlp_logs")) return [];
  const r = await a.app.lake!.query(
    `SELECT body, epoch_us("timestamp") AS t, epoch_us(observed_timestamp) AS o FROM svc_lake.main.otlp_logs WHERE body LIKE 'fw-%' ORDER BY body`,
  );
  return r.rows.map((x) => `${x.body}|${x.t}|${x.o}`);
}

test("an edge forwards the line-protocol and OTLP requests it accepted: the central holds the same rows, each once", async () => {
  await using dc = tempDir("svc-fwd-lp-central-");
  await using de = tempDir("svc-fwd-lp-edge-");
  await using c = await startTestAppliance(dc.path, { node: { http_server: { token: TOKEN } } });
  await using e = await startTestAppliance(de.path, {
    ingest: {
      line_protocol: { enable: true },
      otlp: { enable: true },
      forward: { enable: true, url: c.app.nodeUrl!, token: TOKEN, timeout_sec: 1, batch_packets: 7 },
    },
  });
  const lpUrl = e.app.lineProtocol!.url();
  const otlpUrl = e.app.otlp!.httpUrl()!;
  const T0 = 1_790_000_000_000_000_000n;
  for (let i = 0; i < 20; i++) {
    // A point without a timestamp gets the edge's receive time: the central must use the same.
    const lines = [`cpu,host=h${i} usage=${i}.5 ${T0 + BigInt(i)}`, `cpu,host=n${i} usage=${i}`];
    // A new field halfway: the table grows while forwarded rows are held on the central.
    if (i >= 10) lines.push(`cpu,host=g${i} usage=1,extra=${i}i ${T0 + BigInt(i)}`);
    const res = await fetch(`${lpUrl}/api/v2/write?bucket=fw&precision=ns`, { method: "POST", body: lines.join("\n") });
    expect(res.status).toBe(204);
    const logs = {
      resourceLogs: [
        {
          resource: { attributes: [] },
          scopeLogs: [
            {
              logRecords: [
                { timeUnixNano: String(T0 + BigInt(i) * 1000n), body: { stringValue: `fw-${i}` } },
                { body: { stringValue: `fw-now-${i}` } },
              ],
            },
          ],
        },
      ],
    };
    const o = await fetch(`${otlpUrl}/v1/logs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(logs),
    });
    expect(o.status).toBe(200);
  }
  await waitFor(
    "the central holds every line-protocol row",
    async () => (await lpRows(c)).length >= 50 || undefined,
    20_000,
  );
  await waitFor("the central holds every log record", async () => (await logRows(c)).length >= 40 || undefined, 20_000);
  await waitFor("the edge's logs acknowledged", () => e.app.relay!.health()?.backlogPackets === 0 || undefined, 10_000);
  await e.app.lake!.sync();
  const [edgeLp, centralLp] = [await lpRows(e), await lpRows(c)];
  expect(centralLp.length).toBe(50);
  expect(centralLp).toEqual(edgeLp);
  expect(await logRows(c)).toEqual(await logRows(e));
  const extra = await c.app.lake!.query("SELECT count(extra) AS n FROM svc_lake.fw.cpu");
  expect(Number(extra.rows[0]!.n)).toBe(10);
  const sender = e.app.relay!.senderId()!;
  await waitFor(
    "both streams' marks committed",
    async () =>
      ((await c.app.lake!.writerMark(`forward:${sender}:otlp`)) === 20 &&
        (await c.app.lake!.writerMark(`forward:${sender}:line_protocol`)) === 20) ||
      undefined,
    10_000,
  );
});
