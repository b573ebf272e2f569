/**
 * Agent clocks outside the accepted window (docs/ARCHITECTURE.md "Agent clocks outside the
 * accepted window"; docs/CALL-VIEW.md "Shifted times"): a replay of calls from 2012 and 2009,
 * sent over HEP UDP to a real appliance (default window: 10 years back) in one burst, keeps each
 * call's 100 ms spacing and order, one offset per source (address + capture id), the rows say
 * they were shifted, the fallback counter counts them by reason, and the call view API says so.
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";

const PASSWORD = "hep-clock-password";

/** A call of 7 messages, `spacingMs` apart from `t0Us`, as HEP3 from capture id `captureId`. */
function callPackets(callId: string, t0Us: number, spacingMs: number, captureId: number): Uint8Array[] {
  const p: CallParams = { callId, from: "alice", to: "bob", fromTag: "fa", toTag: "tb" };
  const A = "10.7.0.1";
  const B = "10.7.0.2";
  const msgs: Array<[string, string, string]> = [
    [A, B, invite({ ...p, toTag: "", srcIp: A })],
    [B, A, response(100, "Trying", "INVITE", p)],
    [B, A, response(180, "Ringing", "INVITE", p)],
    [B, A, response(200, "OK", "INVITE", p)],
    [A, B, request("ACK", { ...p, cseq: 1 })],
    [A, B, request("BYE", { ...p, cseq: 2 })],
    [B, A, response(200, "OK", "BYE", { ...p, cseq: 2 })],
  ];
  return msgs.map(([src, dst, payload], i) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: t0Us + i * spacingMs * 1000,
      protoType: 1,
      captureId,
      payload,
    }),
  );
}

interface Row {
  ts: number;
  event: string;
  extra: Record<string, unknown>;
}

test("out-of-window agent times are shifted per source: spacing and order kept, rows marked, call view says so", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl, metrics } = a.app;
  const run = crypto.randomUUID().slice(0, 8);
  const old = { callId: `clock-2012-${run}`, t0Us: Date.UTC(2012, 0, 15, 8, 30, 0) * 1000 + 456, captureId: 701 };
  const older = { callId: `clock-2009-${run}`, t0Us: Date.UTC(2009, 5, 1, 12, 0, 0) * 1000 + 7, captureId: 702 };
  const fresh = { callId: `clock-now-${run}`, t0Us: (Date.now() - 60_000) * 1000, captureId: 703 };
  const udp = await Bun.udpSocket({});
  const port = ingest!.listeners.udp!.port();
  const sentFromMs = Date.now();
  // Interleaved, in one burst: each source's messages reach the appliance within a few ms.
  const a1 = callPackets(old.callId, old.t0Us, 100, old.captureId);
  const b1 = callPackets(older.callId, older.t0Us, 100, older.captureId);
  const c1 = callPackets(fresh.callId, fresh.t0Us, 100, fresh.captureId);
  for (let i = 0; i < a1.length; i++) for (const x of [a1[i]!, b1[i]!, c1[i]!]) udp.send(x, port, "127.0.0.1");
  udp.close();
  const sentToMs = Date.now();

  const rowsOf = async (callId: string): Promise<Row[]> => {
    const r = await lake!.query(
      `SELECT epoch_us(timestamp) AS ts, event, data_extra FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1 ORDER BY timestamp`,
      [callId],
    );
    return r.rows.map((x) => ({
      ts: Number(x.ts),
      event: String(x.event),
      extra: JSON.parse(String(x.data_extra)) as Record<string, unknown>,
    }));
  };
  await waitFor("the three calls in the lake", async () => {
    await lake!.sync();
    const r = await lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`, [
      `clock-%-${run}`,
    ]);
    return Number(r.rows[0]!.n) === 21;
  });
  // Arrival is when the ingest thread reads the datagram: after the send, before the rows are seen.
  const storedByMs = Date.now();
  const order = ["INVITE", "100", "180", "200", "ACK", "BYE", "200"];
  const shifts: number[] = [];
  for (const s of [old, older]) {
    const rows = await rowsOf(s.callId);
    expect(rows.map((r) => r.event)).toEqual(order);
    // Spacing kept within a millisecond (exactly, in fact: one integer offset per source).
    const gaps = rows.slice(1).map((r, i) => r.ts - rows[i]!.ts);
    for (const g of gaps) expect(Math.abs(g - 100_000)).toBeLessThanOrEqual(1000);
    const shift = rows[0]!.extra.time_shifted_us as number;
    expect(rows.map((r) => [r.extra.time_source, r.extra.ts_fallback, r.extra.time_shifted_us])).toEqual(
      rows.map(() => ["shifted", true, shift]),
    );
    rows.forEach((r, i) => expect(r.ts).toBe(s.t0Us + i * 100_000 + shift));
    // Anchored at the arrival of the source's first packet handled: the first sent with one
    // ingest thread; with several, any of the burst that a thread reached first.
    const arrived = rows.filter((r) => r.ts >= sentFromMs * 1000 && r.ts <= storedByMs * 1000);
    expect(arrived.length).toBeGreaterThan(0);
    if ((a.app.ingest!.thread?.count ?? 1) === 1) expect(arrived[0]).toBe(rows[0]!);
    shifts.push(shift);
  }
  // The second source, with another bad clock, has its own offset.
  expect(shifts[0]).not.toBe(shifts[1]);
  // An agent time inside the window is kept as is and not marked.
  const kept = await rowsOf(fresh.callId);
  expect(kept.map((r) => [r.ts, r.extra.time_source ?? null, r.extra.ts_fallback ?? null])).toEqual(
    kept.map((_r, i) => [fresh.t0Us + i * 100_000, null, null]),
  );
  await waitFor("the fallback counter by reason", () =>
    /svc_hep_timestamp_fallback_total\{reason="too_old"\} 14\b/.test(metrics.render()),
  );

  // The call view: the messages API carries the note, with the offset in years and days.
  const api = `${coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const view = async (callId: string) => {
    const r = await fetch(`${api}/transactions/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ session_id: callId, timestamp: { from: sentFromMs - 60_000, to: sentToMs + 60_000 } }),
    });
    expect(r.status).toBe(200);
    return (
      (await r.json()) as {
        data: {
          items: Array<{ timestamp_us: number }>;
          time_shift: { messages: number; shifts_us: number[]; note: string } | null;
        };
      }
    ).data;
  };
  const v = await view(old.callId);
  expect(v.items.map((m) => m.timestamp_us - v.items[0]!.timestamp_us)).toEqual(order.map((_e, i) => i * 100_000));
  expect(v.time_shift).toMatchObject({ messages: 7, shifts_us: [shifts[0]] });
  expect(v.time_shift!.note).toMatch(
    /^Times shifted by 14 y \d+ d: the agent's clock was outside the accepted window; spacing kept$/,
  );
  expect((await view(older.callId)).time_shift!.note).toMatch(/^Times shifted by 17 y \d+ d: /);
  expect((await view(fresh.callId)).time_shift).toBeNull();
});
