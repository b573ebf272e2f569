import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { SearchService } from "../../src/api/index.ts";
import { createSettingsModule } from "../../src/settings/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request } from "../fixtures/sip.ts";
import { seeded } from "../fixtures/seeded.ts";

/**
 * docs/ARCHITECTURE.md "Search": the DEFAULT search over a window wider than an hour returns exactly what the
 * `full` strategy (one ordered scan) returns — the globally newest N, newest first — on a lake
 * whose files overlap in time (flushes of scattered times, a compacted file spanning days) with
 * rows still in the buffer (some of them old), for random windows, limits 1/3/100 and filters.
 * With the old default (`stream`, a scan-order sample) this test fails.
 */
const PASSWORD = "newest-test-password";
const HOUR = 3_600_000;
const NOW_MS = Math.floor(Date.now() / HOUR) * HOUR;
const BASE = NOW_MS - 3 * 24 * HOUR;

type Item = Record<string, unknown>;
const shape = (items: Item[]) =>
  items.map((i) => `${i.timestamp_us}|${i.uuid}|${i.session_id}|${i.method}|${i.caller}|${String(i.payload).length}`);

describe("newest-first search is exact by default", () => {
  test("default strategy equals full on overlapping files and the buffer: random windows, limits 1/3/100, filters", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      // Rows stay in the buffer until flushed by the test; compaction only when the test asks.
      storage: {
        lakehouse: {
          flush_interval_sec: 3600,
          compaction: { enable: true, min_age_sec: 0, check_interval_sec: 86400 },
        },
      },
    });
    const { ingest, lake, coordinatorUrl, config } = a.app;
    expect(config.storage.lakehouse.search.lake_topn_strategy).toBe("newest");
    const random = seeded(15);
    let expected = 0;
    let unique = 0;
    const udp = await Bun.udpSocket({});
    const port = ingest!.listeners.udp!.port();
    const send = async (calls: number, fromMs: number, spanMs: number) => {
      for (let c = 0; c < calls; c++) {
        const id = unique++;
        // Distinct microseconds, except a duplicate INVITE from a second capture point (same time: a tie).
        const t = (fromMs + Math.floor(random() * spanMs)) * 1000 + (id % 1000);
        const callId = `newest-${id}@test`;
        const from = `10${id % 4}`;
        const inv = invite({ callId, from, to: "2000", fromTag: `f${id}` });
        udp.send(
          encodeHep3({
            srcIp: "10.2.0.1",
            dstIp: "10.2.0.2",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: t,
            protoType: 1,
            captureId: 3,
            payload: inv,
          }),
          port,
          "127.0.0.1",
        );
        if (id % 7 === 0)
          udp.send(
            encodeHep3({
              srcIp: "10.2.0.1",
              dstIp: "10.2.0.2",
              srcPort: 5060,
              dstPort: 5060,
              timestampUs: t,
              protoType: 1,
              captureId: 4,
              payload: inv,
            }),
            port,
            "127.0.0.1",
          );
        const bye = request("BYE", { callId, from, to: "2000", fromTag: `f${id}`, toTag: `t${id}`, cseq: 2 });
        udp.send(
          encodeHep3({
            srcIp: "10.2.0.1",
            dstIp: "10.2.0.2",
            srcPort: 5060,
            dstPort: 5060,
            timestampUs: t + Math.floor(1 + random() * 600) * 1_000_000 + 7,
            protoType: 1,
            captureId: 3,
            payload: bye,
          }),
          port,
          "127.0.0.1",
        );
        expected += id % 7 === 0 ? 3 : 2;
      }
      await waitFor("rows visible", async () => {
        await lake!.sync();
        return (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n === expected;
      });
    };
    // Four flushes of overlapping day-long spans, merged by compaction into files sorted by
    // session_id (each spans days); four more flushes over them; then rows left in the buffer,
    // the newest ones and some days old (a late capture).
    for (let b = 0; b < 4; b++) {
      await send(25, BASE + b * 12 * HOUR, 24 * HOUR);
      await lake!.flush();
    }
    await lake!.maintain();
    for (let b = 0; b < 4; b++) {
      await send(25, BASE + 24 * HOUR + b * 9 * HOUR, 30 * HOUR);
      await lake!.flush();
    }
    await send(20, BASE, 3 * 24 * HOUR);
    await send(10, NOW_MS - HOUR, HOUR);
    udp.close();
    expect((await lake!.files("main.hep_proto_1_call")).length).toBeGreaterThan(4);
    const buffered = (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.mem_hep_proto_1_call")).rows[0]!.n;
    expect(Number(buffered)).toBeGreaterThan(0);

    // `full` on the same lake and the same settings (mappings seeded as in the appliance).
    const settings = createSettingsModule(
      { path: `${dir.path}/settings-full.db`, games: false },
      createLogger({ test: true }),
    );
    await settings.module.start();
    const full = new SearchService(
      lake!,
      settings.store,
      { ...config.storage.lakehouse.search, lake_topn_strategy: "full" },
      30_000,
    );
    const eagerNewest = new SearchService(
      lake!,
      settings.store,
      { ...config.storage.lakehouse.search, lazy_payload: false },
      30_000,
    );
    const eagerFull = new SearchService(
      lake!,
      settings.store,
      { ...config.storage.lakehouse.search, lazy_payload: false, lake_topn_strategy: "full" },
      30_000,
    );

    const api = `${coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const viaApi = async (filter: Record<string, unknown>, limit: number, from: number, to: number) => {
      const r = await fetch(`${api}/transactions/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          filter: { proto_type: 1, event_type: "call", ...filter },
          param: { limit },
          timestamp: { from, to },
        }),
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { items: Item[] } }).data.items;
    };

    /** GET /transactions (the list API and `svc search`'s sibling) over the same search service. */
    const viaList = async (filter: Record<string, unknown>, limit: number, from: number, to: number) => {
      const qs = new URLSearchParams({
        from: String(from),
        to: String(to),
        "page[limit]": String(limit),
        ...Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, String(v)])),
      });
      const r = await fetch(`${api}/transactions?${qs}`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { items: Item[] } }).data.items;
    };

    const windows = [
      { from: NOW_MS - 24 * HOUR, to: NOW_MS + HOUR }, // "Last 24 hours"
      { from: BASE - HOUR, to: NOW_MS + HOUR }, // everything
    ];
    for (let i = 0; i < 10; i++) {
      const width = 2 * HOUR + Math.floor(random() * 2.5 * 24 * HOUR);
      const to = BASE + 2 * HOUR + Math.floor(random() * (NOW_MS + HOUR - BASE));
      windows.push({ from: to - width, to });
    }
    const filters: Array<Record<string, unknown>> = [
      {},
      { from_user: "102" },
      { method: "INVITE" },
      { from_user: "101", method: "BYE" },
    ];
    let compared = 0;
    let nonEmpty = 0;
    for (const w of windows) {
      for (const limit of [1, 3, 100]) {
        for (const filter of filters) {
          const label = JSON.stringify({
            w: [new Date(w.from).toISOString(), new Date(w.to).toISOString()],
            limit,
            filter,
          });
          const req = { protoType: 1, eventType: "call", filter, fromMs: w.from, toMs: w.to, limit };
          const want = shape((await full.run(req)).items);
          const got = shape(await viaApi(filter, limit, w.from, w.to));
          expect({ label, rows: got }).toEqual({ label, rows: want });
          const listed = await viaList(filter, limit, w.from, w.to);
          expect({ label, list: shape(listed) }).toEqual({ label, list: want });
          // The same rows on a repeat.
          expect({ label, rows: shape(await viaApi(filter, limit, w.from, w.to)) }).toEqual({ label, rows: want });
          expect({ label, eager: shape((await eagerNewest.run(req)).items) }).toEqual({
            label,
            eager: shape((await eagerFull.run(req)).items),
          });
          compared++;
          if (want.length >= limit) nonEmpty++;
        }
      }
    }
    expect(compared).toBe(windows.length * 3 * filters.length);
    // Most cases fill their limit: the comparison is not between empty answers.
    expect(nonEmpty).toBeGreaterThan(compared / 2);
    await settings.module.stop();
  });

  test("rows crowded at a file's start: the first guess finds too few, the group is read again, the answer is still exact", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      storage: { lakehouse: { flush_interval_sec: 3600, compaction: { enable: false } } },
    });
    const { ingest, lake, config } = a.app;
    const udp = await Bun.udpSocket({});
    const port = ingest!.listeners.udp!.port();
    // 600 messages in 10 s, then one 2 hours later: one file whose rows do not spread evenly over
    // its min..max, so where its rows "should" lie (likelyFloor) holds one row, not 400.
    const t0 = (BASE + 6 * HOUR) * 1000;
    const times = [...Array.from({ length: 600 }, (_v, i) => t0 + i * 16_667), t0 + 2 * HOUR * 1000];
    times.forEach((t, i) =>
      udp.send(
        encodeHep3({
          srcIp: "10.3.0.1",
          dstIp: "10.3.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: t,
          protoType: 1,
          captureId: 3,
          payload: invite({ callId: `crowd-${i}@test`, from: "100", to: "2000", fromTag: `f${i}` }),
        }),
        port,
        "127.0.0.1",
      ),
    );
    udp.close();
    await waitFor("rows visible", async () => {
      await lake!.sync();
      return Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) === 601;
    });
    await lake!.flush();
    expect((await lake!.files("main.hep_proto_1_call")).length).toBe(1);
    const settings = createSettingsModule(
      { path: `${dir.path}/settings-x.db`, games: false },
      createLogger({ test: true }),
    );
    await settings.module.start();
    const search = config.storage.lakehouse.search;
    const newest = new SearchService(lake!, settings.store, search, 30_000);
    const full = new SearchService(lake!, settings.store, { ...search, lake_topn_strategy: "full" }, 30_000);
    for (const limit of [1, 3, 100]) {
      const req = { protoType: 1, eventType: "call", filter: {}, fromMs: BASE, toMs: BASE + 12 * HOUR, limit };
      const want = shape((await full.run(req)).items);
      expect(want.length).toBe(limit);
      expect({ limit, rows: shape((await newest.run(req)).items) }).toEqual({ limit, rows: want });
    }
    await settings.module.stop();
  });
});
