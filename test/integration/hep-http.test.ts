/**
 * HEP over HTTP (`POST /api/v1/hep` on the node port; docs/ARCHITECTURE.md "HEP over HTTP"): the
 * status says what became of the packets. 202 only when at least one was taken, with the others
 * counted per reason; 403 when none was taken because the auth key was missing or wrong; 503 when
 * the write buffer is full; 400 for packets that do not decode.
 */
import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";

const packet = (callId: string, authKey?: string) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: Date.now() * 1000,
    protoType: 1,
    ...(authKey === undefined ? {} : { authKey }),
    payload: invite({ callId, from: "a", to: "b" }),
  });

const concat = (...parts: Uint8Array[]) => Buffer.concat(parts);

type Answer = {
  status: number;
  body: { error?: string; message?: string; accepted?: number; rejected?: Record<string, number> };
};

async function post(a: TestAppliance, body: Uint8Array): Promise<Answer> {
  const res = await fetch(`${a.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.from(body) });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

async function count(a: TestAppliance, callId: string): Promise<number> {
  await a.app.lake!.sync();
  const r = await a.app.lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`, [
    callId,
  ]);
  return Number(r.rows[0]!.n);
}

describe("POST /api/v1/hep answers what became of the packets", () => {
  test("with ingest.hep.auth_key: a missing or wrong key is 403 with a message, nothing stored; mixed bodies are 202 with counts", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { auth_key: "s3cret-key" } } });

    const missing = await post(a, packet("http-no-key"));
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ error: "FORBIDDEN", accepted: 0, rejected: { auth_failed: 1 } });
    expect(missing.body.message).toContain("ingest.hep.auth_key");

    const wrong = await post(a, concat(packet("http-wrong-1", "guess"), packet("http-wrong-2", "s3cret-ke")));
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ error: "FORBIDDEN", accepted: 0, rejected: { auth_failed: 2 } });

    const right = await post(a, packet("http-right", "s3cret-key"));
    expect(right).toEqual({ status: 202, body: { accepted: 1, rejected: {} } });

    const mixed = await post(
      a,
      concat(
        packet("http-mixed-1", "s3cret-key"),
        packet("http-mixed-bad", "nope"),
        packet("http-mixed-2", "s3cret-key"),
      ),
    );
    expect(mixed).toEqual({ status: 202, body: { accepted: 2, rejected: { auth_failed: 1 } } });

    await waitFor(
      "the accepted packets stored",
      async () =>
        (await count(a, "http-right")) + (await count(a, "http-mixed-1")) + (await count(a, "http-mixed-2")) === 3,
    );
    for (const id of ["http-no-key", "http-wrong-1", "http-wrong-2", "http-mixed-bad"])
      expect(await count(a, id)).toBe(0);
    expect(a.app.metrics.render()).toMatch(/svc_hep_packets_dropped_total\{reason="auth_failed"\} 4/);
  });

  test("without an auth key: packets that do not decode are 400 with the reasons; a truncated frame is 400", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    // A well-framed HEP3 packet of only its 6-octet header: framed, but no chunks to decode.
    const empty = new Uint8Array([0x48, 0x45, 0x50, 0x33, 0x00, 0x06]);
    const bad = await post(a, empty);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("HEP_DECODE");
    expect(bad.body.accepted).toBe(0);
    expect(Object.values(bad.body.rejected ?? {}).reduce((x, y) => x + y, 0)).toBe(1);

    const good = packet("http-before-truncation");
    const truncated = await post(a, concat(good, good.subarray(0, 20)));
    expect(truncated.status).toBe(400);
    expect(truncated.body).toMatchObject({ error: "HEP_DECODE", accepted: 1, rejected: { truncated_frame: 1 } });
  });

  test("a full write buffer is 503 with Retry-After, not 202", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      storage: { lakehouse: { max_buffered_rows: 1000, flush_interval_sec: 3600, batch_size: 100000 } },
    });
    const fill = concat(...Array.from({ length: 1000 }, (_, i) => packet(`fill-${i}`)));
    expect((await post(a, fill)).body.accepted).toBe(1000);
    const res = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
      method: "POST",
      body: Buffer.from(packet("over-the-top")),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ error: "UNAVAILABLE", accepted: 0, rejected: { backlog_full: 1 } });
  });
});
