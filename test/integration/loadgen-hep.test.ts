/**
 * HEP mirroring (docs/LOADGEN.md "HEP mirroring"): a loadgen client copies every SIP message it
 * sends and receives as HEP3 to a running appliance that requires the auth key (hep_password), and
 * every call is then found by Call-ID through the transaction view with all six of its messages,
 * and its RTCP reports (hep_homer_lake_rtcp) through the QoS view.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { Engine } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { streamSsrc } from "../../src/loadgen/rtcp.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { settleStored } from "../peers/stored-sip.ts";

const CALLS = 10;
const PASSWORD = "loadgen-view-password";
const HEP_KEY = "hep-mirror-key";

describe("loadgen HEP mirroring", () => {
  test("every call lands in svc with all its messages, findable by Call-ID", async () => {
    await using dir = tempDir("svc-loadgen-hep-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      ingest: { hep: { auth_key: HEP_KEY } },
    });
    const hepPort = a.app.ingest!.listeners.udp!.port();
    // The server on 127.0.0.2: the two directions' media addresses (and SSRCs) differ, as on a real network.
    const uas = await startUas({ local_ip: "127.0.0.2" });
    const callIds: string[] = [];
    let sent = 0;
    try {
      const uac = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.2:${uas.binds[0]!.port}`,
          rate: 50,
          total_calls: CALLS,
          hep_addr: `127.0.0.1:${hepPort}`,
          hep_capture_id: 2323,
          hep_password: HEP_KEY,
          hep_raw_rtcp: true,
          hep_homer_lake_rtcp: true,
        }),
        mode: "load",
      });
      await uac.start();
      const origSend = uac.legs[0]!.send;
      // Record the Call-IDs the engine put on the wire (the INVITEs it sent).
      (uac.legs[0] as { send: typeof origSend }).send = (text, host, port) => {
        const m = /^INVITE [\s\S]*?\r\nCall-ID: (.+)\r\n/m.exec(text);
        if (m && !callIds.includes(m[1]!)) callIds.push(m[1]!);
        origSend(text, host, port);
      };
      await uac.done;
      const s = uac.snapshot();
      expect(s.calls_successful).toBe(CALLS);
      sent = s.hep_sent;
    } finally {
      await uas.stop();
    }
    // INVITE, 180, 200, ACK, BYE, 200 per call, each copied once by the client, and per call two
    // RTCP reports (one per direction) as raw packets and as JSON.
    expect(sent).toBe(CALLS * 10);
    expect(callIds).toHaveLength(CALLS);
    const rows = await settleStored(a.app.lake!, CALLS * 6, 20_000);
    expect(rows.filter((r) => r.nodeId === 2323)).toHaveLength(CALLS * 6);

    const api = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const now = Date.now();
    for (const callId of callIds) {
      const r = await fetch(`${api}/transactions/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ session_id: callId, timestamp: { from: now - 600_000, to: now + 60_000 } }),
      });
      const items = ((await r.json()) as { data: { items: Array<{ event: string; cseq_method: string }> } }).data.items;
      expect({ callId, messages: items.map((m) => `${m.event}/${m.cseq_method}`).sort() }).toEqual({
        callId,
        messages: ["180/INVITE", "200/BYE", "200/INVITE", "ACK/ACK", "BYE/BYE", "INVITE/INVITE"],
      });
      // The JSON reports are found by the Call-ID (correlation id): one stream per direction, no loss.
      const q = await fetch(`${api}/transactions/qos`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ session_id: callId, timestamp: { from: now - 600_000, to: now + 60_000 } }),
      });
      const streams = (
        (await q.json()) as { data: { streams: Array<{ ssrc: string | null; summary: { total_lost: number } }> } }
      ).data.streams;
      // Each call's media on ports of its own (docs/LOADGEN.md "Engine"): the view lists its two streams only, with their SSRCs.
      const n = callIds.indexOf(callId);
      const own = [
        String(streamSsrc(callId, { ip: "127.0.0.1", port: 6000 + 2 * n })),
        String(streamSsrc(callId, { ip: "127.0.0.2", port: 30000 + 2 * n })),
      ].sort();
      expect({
        callId,
        ssrcs: streams.map((st) => st.ssrc).sort(),
        lost: streams.map((st) => st.summary.total_lost),
      }).toEqual({ callId, ssrcs: own, lost: [0, 0] });
    }
  }, 60_000);
});
