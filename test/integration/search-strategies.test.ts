import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request } from "../fixtures/sip.ts";

/**
 * Every execution path of the search gives the rows a plain ordered SQL query gives: lazy payload
 * (narrow pass, then hydration by session and uuid) or one statement, `newest` / `stream` /
 * `chunked` / `full` over a window wider than an hour, rows in Parquet and in the buffer, rows without a
 * session id (RTCP with no correlation id). `newest` (the default) is checked against `full` on a
 * lake of overlapping files in search-newest.test.ts.
 */
const PASSWORD = "strategy-test-password";
const NOW_MS = Date.now();
const HOUR = 3_600_000;
const CALLS = 60;

function hep(payload: string, tsMs: number, proto = 1, correlationId?: string) {
  return encodeHep3({
    srcIp: "10.1.0.1",
    dstIp: "10.1.0.2",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: tsMs * 1000,
    protoType: proto,
    captureId: 3,
    payload,
    ...(correlationId ? { correlationId } : {}),
  });
}

type Item = Record<string, unknown>;
const shape = (items: Item[]) =>
  items.map(
    (i) =>
      `${i.timestamp_us}|${i.session_id}|${i.event}|${i.caller}|${String(i.payload).length}|${JSON.stringify(i.data_extra)}`,
  );

describe("search strategies and lazy payload", () => {
  test("lazy and eager, stream/chunked/full: exact rows, payloads and order against plain SQL", async () => {
    await using dir = tempDir();
    const packets: Uint8Array[] = [];
    // 60 calls over 3 hours (INVITE + BYE), callers from a pool of 4; RTCP with and without a correlation id.
    for (let c = 0; c < CALLS; c++) {
      const t = NOW_MS - 3 * HOUR + c * 170_000;
      const callId = `strat-${c}@test`;
      const from = `10${c % 4}`;
      packets.push(hep(invite({ callId, from, to: "2000", fromTag: `f${c}` }), t));
      packets.push(
        hep(request("BYE", { callId, from, to: "2000", fromTag: `f${c}`, toTag: `t${c}`, cseq: 2 }), t + 60_000),
      );
      packets.push(hep(JSON.stringify({ type: 200, ssrc: c }), t + 1000, 5, c % 2 === 0 ? callId : undefined));
    }
    const configs = [
      { lazy_payload: true, lake_topn_strategy: "stream" },
      { lazy_payload: true, lake_topn_strategy: "newest" },
      { lazy_payload: false, lake_topn_strategy: "newest" },
      { lazy_payload: true, lake_topn_strategy: "chunked" },
      { lazy_payload: true, lake_topn_strategy: "full" },
      { lazy_payload: false, lake_topn_strategy: "chunked" },
      { lazy_payload: false, lake_topn_strategy: "full" },
      { lazy_payload: false, lake_topn_strategy: "stream" },
    ];
    const results: Array<{
      cfg: (typeof configs)[number];
      got: Record<"newest" | "callId" | "callIds" | "caller" | "callerAndMethod" | "rtcp", Item[]>;
    }> = [];
    let truth: Record<string, string[]> = {};
    for (const [n, cfg] of configs.entries()) {
      await using a = await startTestAppliance(dir.path, {
        coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
        storage: { lakehouse: { search: { ...cfg, lake_chunk_sec: 3600 } } },
      });
      const { ingest, lake, coordinatorUrl } = a.app;
      if (n === 0) {
        const udp = await Bun.udpSocket({});
        // First half flushed into Parquet, second half left in the buffer.
        for (const p of packets.slice(0, packets.length / 2)) udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
        await waitFor("first half stored", async () => {
          await lake!.sync();
          return (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n === CALLS;
        });
        await lake!.flush();
        for (const p of packets.slice(packets.length / 2)) udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
        udp.close();
        await waitFor("second half visible", async () => {
          await lake!.sync();
          return (
            (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n === 2 * CALLS
          );
        });
      }
      const api = `${coordinatorUrl}/api/v4`;
      const login = await fetch(`${api}/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: PASSWORD }),
      });
      const token = ((await login.json()) as { token: string }).token;
      const range = { from: NOW_MS - 4 * HOUR, to: NOW_MS + 60_000 };
      const search = async (filter: Record<string, unknown>, limit: number, proto = 1) => {
        const r = await fetch(`${api}/transactions/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            filter: { proto_type: proto, ...(proto === 1 ? { event_type: "call" } : {}), ...filter },
            param: { limit },
            timestamp: range,
          }),
        });
        expect(r.status).toBe(200);
        return ((await r.json()) as { data: { items: Item[] } }).data.items;
      };
      const got = {
        newest: await search({}, 25),
        callId: await search({ call_id: "strat-7@test" }, 100),
        callIds: await search({ call_id: "strat-7@test;strat-58@test" }, 100),
        caller: await search({ from_user: "102" }, 10),
        callerAndMethod: await search({ from_user: "101", method: "BYE" }, 100),
        rtcp: await search({}, 200, 5),
      };
      results.push({ cfg, got });
      if (n === 0) {
        // Ground truth: one plain ordered statement over the same rows.
        const q = async (table: string, where: string, limit: number) => {
          const r = await lake!.query(
            `SELECT epoch_us(timestamp) AS ts, session_id, event, caller, payload, data_extra FROM svc_lake.main.${table} WHERE ${where} ORDER BY timestamp DESC LIMIT ${limit}`,
          );
          return r.rows.map(
            (x) =>
              `${x.ts}|${x.session_id}|${x.event}|${x.caller}|${String(x.payload).length}|${JSON.stringify(JSON.parse(String(x.data_extra)))}`,
          );
        };
        truth = {
          newest: await q("hep_proto_1_call", "true", 25),
          callId: await q("hep_proto_1_call", "session_id = 'strat-7@test'", 100),
          callIds: await q("hep_proto_1_call", "session_id IN ('strat-7@test', 'strat-58@test')", 100),
          caller: await q("hep_proto_1_call", "caller = '102'", 10),
          callerAndMethod: await q("hep_proto_1_call", "caller = '101' AND method = 'BYE'", 100),
          rtcp: await q("hep_proto_5_default", "true", 200),
        };
        expect(truth.callId!).toHaveLength(2);
        expect(truth.caller!).toHaveLength(10);
        expect(truth.rtcp!).toHaveLength(CALLS);
        expect(truth.rtcp!.filter((r) => /^\d+\|null\|/.test(r))).toHaveLength(CALLS / 2);
      }
    }
    for (const { cfg, got } of results) {
      const label = JSON.stringify(cfg);
      for (const k of ["callId", "callIds", "caller", "callerAndMethod", "rtcp"] as const)
        expect({ label, k, rows: shape(got[k]!) }).toEqual({ label, k, rows: truth[k]! });
      if (cfg.lake_topn_strategy === "stream") {
        // A sample: 25 rows of the window, newest first, payload and data_extra filled.
        expect(got.newest).toHaveLength(25);
        const ts = got.newest.map((i) => Number(i.timestamp_us));
        expect([...ts].sort((x, y) => y - x)).toEqual(ts);
        for (const i of got.newest) expect(String(i.payload)).toMatch(/^(INVITE|BYE) /);
      } else expect({ label, rows: shape(got.newest) }).toEqual({ label, rows: truth.newest! });
    }
  });
});
