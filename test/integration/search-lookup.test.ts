import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

/**
 * Point lookups (docs/ARCHITECTURE.md "Point lookups"): a search by Call-ID, caller, callee or IP
 * reads only the data files whose Parquet bloom filters may hold the value — on files whose
 * min/max cannot tell (Call-IDs and callers interleaved over every file) — and answers exactly
 * what one plain ordered statement over every file and the buffer answers.
 */
const PASSWORD = "lookup-test-password";
const NOW_MS = Date.now();
const MIN = 60_000;
const FILES = 4;
const CALLS = 10;

function hep(payload: string, tsMs: number, srcIp: string) {
  return encodeHep3({
    srcIp,
    dstIp: "10.9.0.1",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: tsMs * 1000,
    protoType: 1,
    captureId: 7,
    payload,
  });
}

/**
 * One call of 8 messages (repeated values: DuckDB writes bloom filters for dictionary-encoded
 * chunks only). A fence call (`low`/`high`) holds values sorting before / after every other call's,
 * so each file's min/max span every value and only the bloom filters can rule a file out.
 */
function call(n: number, batch: number, fence?: "low" | "high"): Uint8Array[] {
  const f = fence === "low" ? "!" : fence === "high" ? "~" : undefined;
  const p = f
    ? { callId: `lk-${f}-${batch}`, from: `${f}${batch}`, to: `${f}${batch}`, fromTag: `f${f}`, toTag: `t${f}` }
    : { callId: `lk-${n}@test`, from: `${1000 + n}`, to: `${5000 + (n % 3)}`, fromTag: `f${n}`, toTag: `t${n}` };
  const t = NOW_MS - 60 * MIN + batch * 10 * MIN + (n % CALLS) * 1000;
  const ip = fence === "low" ? `1.0.0.${batch}` : fence === "high" ? `9.0.0.${batch}` : `10.5.${n % 7}.${n}`;
  const msgs = [
    invite({ ...p, srcIp: ip }),
    response(100, "Trying", "INVITE", p),
    response(180, "Ringing", "INVITE", p),
    response(200, "OK", "INVITE", p),
    request("ACK", { ...p, cseq: 1 }),
    request("INFO", p),
    request("BYE", { ...p, cseq: 3 }),
    response(200, "OK", "BYE", { ...p, cseq: 3 }),
  ];
  return msgs.map((m, i) => hep(m, t + i * 10, ip));
}

type Item = Record<string, unknown>;

describe("point lookups prune data files by bloom filters", () => {
  test("Call-ID, caller, callee and IP searches read fewer files and answer exactly", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, coordinatorUrl } = a.app;
    const lake = a.app.lake!;
    const key = "main.hep_proto_1_call";
    const udp = await Bun.udpSocket({});
    const count = async () =>
      Number((await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n);
    // FILES flushes of interleaved calls (call n in file n % FILES), then one batch left in the buffer.
    for (let b = 0; b <= FILES; b++) {
      const pkts = [...call(0, b, "low"), ...call(0, b, "high")];
      for (let c = 0; c < CALLS; c++) pkts.push(...call(c * (FILES + 1) + b, b));
      for (const pkt of pkts) udp.send(pkt, ingest!.listeners.udp!.port(), "127.0.0.1");
      await waitFor(`batch ${b} stored`, async () => {
        await lake.sync();
        return (await count()) === (b + 1) * (CALLS + 2) * 8;
      });
      if (b < FILES) await lake.flush();
    }
    udp.close();
    expect(await lake.files(key)).toHaveLength(FILES);

    const api = `${coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const range = { from: NOW_MS - 2 * 60 * MIN, to: NOW_MS + MIN };
    const search = async (filter: Record<string, unknown>) => {
      const r = await fetch(`${api}/transactions/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          filter: { proto_type: 1, event_type: "call", ...filter },
          param: { limit: 100 },
          timestamp: range,
        }),
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { items: Item[] } }).data.items.map(
        (i) => `${i.timestamp_us}|${i.uuid}|${i.session_id}|${i.caller}|${String(i.payload).length}`,
      );
    };
    // The truth: one ordered statement over the table's view (every file and the buffer).
    const truth = async (where: string) =>
      (
        await lake.query(
          `SELECT epoch_us(timestamp) AS ts, uuid, session_id, caller, payload FROM svc_lake.main.hep_proto_1_call WHERE ${where} ORDER BY timestamp DESC, uuid DESC LIMIT 100`,
        )
      ).rows.map((x) => `${x.ts}|${x.uuid}|${x.session_id}|${x.caller}|${String(x.payload).length}`);

    const cases: Array<{ filter: Record<string, unknown>; where: string; rows: number; readsAtMost: number }> = [
      // lk-12: file 2 (12 = 2 * 5 + 2).
      { filter: { call_id: "lk-12@test" }, where: "session_id = 'lk-12@test'", rows: 8, readsAtMost: 1 },
      // Two Call-IDs: files 0 and 3.
      {
        filter: { call_id: "lk-5@test;lk-33@test" },
        where: "session_id IN ('lk-5@test', 'lk-33@test')",
        rows: 16,
        readsAtMost: 2,
      },
      // In the buffer (batch 4): no file holds it, the buffer is always read.
      { filter: { call_id: "lk-9@test" }, where: "session_id = 'lk-9@test'", rows: 8, readsAtMost: 0 },
      { filter: { from_user: "1021" }, where: "caller = '1021'", rows: 8, readsAtMost: 1 },
      { filter: { src_ip: "10.5.3.38" }, where: "src_ip = '10.5.3.38'", rows: 8, readsAtMost: 1 },
      { filter: { ip: "10.5.3.38" }, where: "(src_ip = '10.5.3.38' OR dst_ip = '10.5.3.38')", rows: 8, readsAtMost: 1 },
      // Nobody: no file read.
      { filter: { to_user: "9999" }, where: "callee = '9999'", rows: 0, readsAtMost: 0 },
      // A pattern is no lookup: every file is read, the answer is still exact.
      { filter: { from_user: "102%" }, where: "caller LIKE '102%'", rows: 80, readsAtMost: FILES },
    ];
    for (const c of cases) {
      const before = lake.lookupStats()!;
      const got = await search(c.filter);
      const after = lake.lookupStats()!;
      const want = await truth(c.where);
      expect({ filter: c.filter, rows: got }).toEqual({ filter: c.filter, rows: want });
      expect({ filter: c.filter, n: want.length }).toEqual({ filter: c.filter, n: c.rows });
      // Over the scan plans the search made (its first pass over the window, then hydration of
      // the page within the rows' time span, which the catalog's time pruning may already narrow
      // to one file): the first one alone drops every file but `readsAtMost`.
      const looked = after.files - before.files;
      const dropped = after.filesDropped - before.filesDropped;
      if (c.filter.from_user === "102%") expect(looked).toBe(0);
      else {
        expect({
          filter: c.filter,
          looked: looked >= FILES,
          dropped: dropped >= FILES - c.readsAtMost,
          kept: looked - dropped <= 2 * c.readsAtMost,
        }).toEqual({
          filter: c.filter,
          looked: true,
          dropped: true,
          kept: true,
        });
      }
    }
  });
});
