/**
 * The call view's time window follows the user's transaction.range (docs/API.md "Users and
 * settings"; docs/ADMIN.md "Call view time window"): the selected messages are looked for in the
 * request's range widened by message_from/message_to, the call is read from first row + from to last
 * row + to.
 */
import { expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "transaction-range-password";

test("message_from/message_to widen where the call is looked for; from/to widen the window read around it", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  });
  const { ingest, lake, coordinatorUrl } = a.app;
  const api = `${coordinatorUrl}/api/v4`;
  const callId = `range-${crypto.randomUUID()}`;
  const t0 = Date.now() - 600_000;
  const p = { callId, from: "1001", to: "2002", fromTag: "f" };
  // INVITE, 200 and ACK in the first 2 s; the BYE 90 s later.
  const at = (payload: string, ms: number, src = "10.9.0.1", dst = "10.9.0.2") =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: (t0 + ms) * 1000,
      protoType: 1,
      captureId: 9,
      payload,
    });
  const packets = [
    at(invite({ ...p, srcIp: "10.9.0.1", mediaPort: 40000 }), 0),
    at(response(200, "OK", "INVITE", { ...p, toTag: "t" }), 1_500, "10.9.0.2", "10.9.0.1"),
    at(request("ACK", { ...p, toTag: "t", cseq: 1 }), 2_000),
    at(request("BYE", { ...p, toTag: "t", cseq: 2 }), 92_000),
  ];
  const udp = await Bun.udpSocket({});
  for (const x of packets) udp.send(x, ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  await waitFor("the call in the lake", async () => {
    await lake!.sync();
    const r = await lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`, [
      callId,
    ]);
    return Number(r.rows[0]!.n) === packets.length;
  });
  const token = (
    (await (
      await fetch(`${api}/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: PASSWORD }),
      })
    ).json()) as {
      token: string;
    }
  ).token;
  const call = async (method: string, path: string, body: unknown) => {
    const r = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: r.status,
      json: (await r.json()) as {
        data: {
          items: Array<{ event: string }>;
          window: { from_ms: number; to_ms: number };
          lookup: { from_ms: number; to_ms: number };
        };
        message?: string;
      },
    };
  };
  const setRange = async (data: Record<string, number>) =>
    expect((await call("PUT", "/me/settings/transaction", { param: "range", data })).status).toBe(200);
  const events = (r: Awaited<ReturnType<typeof call>>) => r.json.data.items.map((m) => m.event);

  // A search range that starts 10 s after the ACK and ends before the BYE holds none of the call's rows.
  const narrow = { from: t0 + 12_000, to: t0 + 60_000 };

  // Defaults (±5 min): the lookup reaches back to the INVITE; the window runs to the BYE's +5 min.
  const byDefault = await call("POST", "/transactions/messages", { session_id: callId, timestamp: narrow });
  expect(byDefault.status).toBe(200);
  expect(events(byDefault)).toEqual(["INVITE", "200", "ACK", "BYE"]);
  expect(byDefault.json.data.lookup).toEqual({ from_ms: narrow.from - 300_000, to_ms: narrow.to + 300_000 });
  expect(byDefault.json.data.window).toEqual({ from_ms: t0 - 300_000, to_ms: t0 + 92_000 + 300_000 });

  // message_from of 5 s does not reach the ACK (10 s before the range), message_to of 40 s reaches the BYE.
  await setRange({ from: -1_000, to: 1_000, message_from: -5_000, message_to: 40_000 });
  const onlyBye = await call("POST", "/transactions/messages", { session_id: callId, timestamp: narrow });
  expect(onlyBye.status).toBe(200);
  expect(onlyBye.json.data.lookup).toEqual({ from_ms: narrow.from - 5_000, to_ms: narrow.to + 40_000 });
  // Anchored on the BYE alone, from/to (±1 s) keep the window at the BYE.
  expect(events(onlyBye)).toEqual(["BYE"]);
  expect(onlyBye.json.data.window).toEqual({ from_ms: t0 + 92_000 - 1_000, to_ms: t0 + 92_000 + 1_000 });

  // Neither reaches: nothing of the call in the widened range is a 404.
  await setRange({ from: -1_000, to: 1_000, message_from: -5_000, message_to: 5_000 });
  const none = await call("POST", "/transactions/messages", { session_id: callId, timestamp: narrow });
  expect(none.status).toBe(404);

  // message_from of 11 s reaches the 200 and the ACK, not the INVITE; from of 3 s then brings the
  // INVITE (1.5 s before the 200) into the window.
  await setRange({ from: -3_000, to: 1_000, message_from: -11_000, message_to: 5_000 });
  const from200 = await call("POST", "/transactions/messages", { session_id: callId, timestamp: narrow });
  expect(events(from200)).toEqual(["INVITE", "200", "ACK"]);
  expect(from200.json.data.window).toEqual({ from_ms: t0 + 1_500 - 3_000, to_ms: t0 + 2_000 + 1_000 });
  // With from of 1 s the INVITE stays outside.
  await setRange({ from: -1_000, to: 1_000, message_from: -11_000, message_to: 5_000 });
  expect(events(await call("POST", "/transactions/messages", { session_id: callId, timestamp: narrow }))).toEqual([
    "200",
    "ACK",
  ]);
});
