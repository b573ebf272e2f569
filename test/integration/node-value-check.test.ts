/**
 * The node check's value body `{field, values[]}` (docs/ARCHITECTURE.md "Node check by values"):
 * answered exactly from the lake, flushed files and buffer alike; the range body still works.
 */
import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";

const NOW_US = Date.now() * 1000;
const packet = (callId: string, i: number) =>
  encodeHep3({
    srcIp: `10.1.${(i >> 8) & 255}.${i & 255}`,
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: NOW_US + i,
    protoType: 1,
    payload: invite({ callId, from: `u${i}`, to: "2002" }),
  });

describe("POST /api/v1/metadata/check {field, values[]}", () => {
  test("100 000 Call-IDs: exactly the stored ones are present, in Parquet and in the buffer", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const url = `${a.app.nodeUrl}/api/v1/metadata/check`;
    const stored = Array.from({ length: 2000 }, (_, i) => `vc-${i}-${crypto.randomUUID()}`);
    const post = async (body: Uint8Array) =>
      expect((await fetch(`${a.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.from(body) })).status).toBe(
        202,
      );
    const frames = (from: number, to: number) =>
      new Uint8Array(stored.slice(from, to).flatMap((id, k) => [...packet(id, from + k)]));
    // The first half flushed to Parquet, the second half left in the buffer.
    await post(frames(0, 1000));
    await waitFor("the first half stored", async () => {
      await a.app.lake!.sync();
      return (
        Number((await a.app.lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
          1000 || undefined
      );
    });
    await a.app.lake!.flush();
    await post(frames(1000, 2000));
    await waitFor("every call stored", async () => {
      await a.app.lake!.sync();
      return (
        Number((await a.app.lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
          2000 || undefined
      );
    });
    const absent = Array.from({ length: 98_000 }, () => `absent-${crypto.randomUUID()}`);
    const values = [...absent, ...stored].sort(() => Math.random() - 0.5);
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ field: "call_id", values }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      has_data: boolean;
      checked: number;
      present: string[];
      exact: boolean;
      false_positive_rate: number;
    };
    expect(body.has_data).toBe(true);
    expect(body.checked).toBe(100_000);
    expect(body.present.sort()).toEqual([...stored].sort());
    expect(body.exact).toBe(true);

    const check = async (b: Record<string, unknown>) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(b),
      });
      return {
        status: res.status,
        json: (await res.json()) as { has_data: boolean; present: string[]; message?: string },
      };
    };
    // A few values (read pruned by the files' bloom filters, as a literal list): one in Parquet,
    // one in the buffer; a quote in a value is a value, not SQL.
    const few = [stored[3]!, stored[1500]!, "it's-absent", ...absent.slice(0, 20)];
    expect((await check({ field: "call_id", values: few })).json.present.sort()).toEqual(
      [stored[3]!, stored[1500]!].sort(),
    );
    // Users and addresses, either end.
    expect((await check({ field: "user", values: ["u5", "2002", "nobody"] })).json.present.sort()).toEqual([
      "2002",
      "u5",
    ]);
    expect(
      (await check({ field: "ip", values: ["10.1.0.7", "192.0.2.2", "203.0.113.9"] })).json.present.sort(),
    ).toEqual(["10.1.0.7", "192.0.2.2"]);
    expect((await check({ field: "call_id", values: absent.slice(0, 10) })).json).toMatchObject({
      has_data: false,
      present: [],
    });
    // A range that ends before the data: nothing there.
    expect(
      (await check({ field: "call_id", values: stored.slice(0, 5), min_ts: 0, max_ts: (NOW_US - 10_000_000) * 1000 }))
        .json.has_data,
    ).toBe(false);
    // Bad input: 400 with the reason; the range body still answers as before.
    const bad = await check({ field: "colour", values: ["x"] });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("call_id");
    const range = await check({ min_ts: 0, max_ts: (NOW_US + 60_000_000) * 1000 });
    expect(range.status).toBe(200);
    expect(range.json.has_data).toBe(true);
  }, 120_000);
});
