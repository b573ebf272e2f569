import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { encodeHep3 } from "../../src/hep/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

/**
 * Row fetch by page (docs/ARCHITECTURE.md "Row fetch by page"): once compaction has cut the merged
 * file into pages, a search's second pass reads its rows page by page, and every answer is what
 * one ordered statement over every file and the buffer gives, every column included.
 */
const PASSWORD = "paged-test-password";
const NOW_MS = Date.now();
const MIN = 60_000;
const BATCHES = 4;
const CALLS = 12;

function call(n: number, batch: number): Uint8Array[] {
  const p = {
    callId: `pg-${n}@test`,
    from: `${1000 + (n % 5)}`,
    to: `${5000 + (n % 3)}`,
    fromTag: `f${n}`,
    toTag: `t${n}`,
  };
  const t = NOW_MS - 90 * MIN + batch * 10 * MIN + n * 1000;
  const ip = `10.6.${n % 4}.${n}`;
  const msgs = [
    invite({ ...p, srcIp: ip }),
    response(100, "Trying", "INVITE", p),
    response(180, "Ringing", "INVITE", p),
    response(200, "OK", "INVITE", p),
    request("ACK", { ...p, cseq: 1 }),
    request("BYE", { ...p, cseq: 2 }),
    response(200, "OK", "BYE", { ...p, cseq: 2 }),
  ];
  return msgs.map((m, i) =>
    encodeHep3({
      srcIp: ip,
      dstIp: "10.9.0.1",
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: (t + i * 10) * 1000,
      protoType: 1,
      captureId: 7,
      payload: m,
    }),
  );
}

type Item = Record<string, unknown>;
const COLUMNS = [
  "uuid",
  "session_id",
  "caller",
  "callee",
  "src_ip",
  "dst_ip",
  "src_port",
  "method",
  "response_code",
  "cseq_method",
  "event",
  "node_id",
  "cid",
  "payload",
] as const;

describe("searches over paged merged files", () => {
  test("the second pass reads rows page by page and every answer equals the plain statement's, column by column", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      storage: {
        lakehouse: {
          // The last batch stays in the buffer until the end (the others are flushed by the test).
          flush_interval_sec: 3600,
          search: { lazy_payload: true },
          compaction: { enable: true, min_age_sec: 0, check_interval_sec: 86_400, rows_per_page: 4 },
        },
      },
    });
    const { ingest, coordinatorUrl } = a.app;
    const lake = a.app.lake!;
    const key = "main.hep_proto_1_call";
    const udp = await Bun.udpSocket({});
    const count = async () =>
      Number((await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n);
    // BATCHES flushes, merged into one paged file, then one more batch left in the buffer.
    for (let b = 0; b <= BATCHES; b++) {
      for (let c = 0; c < CALLS; c++)
        for (const pkt of call(b * CALLS + c, b)) udp.send(pkt, ingest!.listeners.udp!.port(), "127.0.0.1");
      await waitFor(`batch ${b} stored`, async () => {
        await lake.sync();
        return (await count()) === (b + 1) * CALLS * 7;
      });
      if (b < BATCHES) await lake.flush();
      if (b === BATCHES - 1) expect((await lake.maintain()).merged).toBe(BATCHES);
    }
    udp.close();
    const files = await lake.files(key);
    expect(files).toHaveLength(1);
    const md = await parquetMetadataAsync(await asyncBufferFromFile(join(dir.path, "lake", files[0]!.path)));
    expect(md.row_groups[0]!.columns.every((c) => c.offset_index_offset !== undefined)).toBe(true);

    // The warm-up after start (src/lake/lookup-warm.ts) reads the merged file's footer into the
    // lookup indexes: the searches below index no footer again.
    const warmed = { lookups: lake.lookupStats()!.footers, layouts: lake.pageStats()!.layouts };
    expect(await lake.warmLookups()).toBe(1);
    const afterWarm = { lookups: lake.lookupStats()!.footers, layouts: lake.pageStats()!.layouts };
    expect(afterWarm).toEqual({ lookups: warmed.lookups + 1, layouts: warmed.layouts + 1 });

    const api = `${coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const row = (x: Item, ts: unknown) => [String(ts), ...COLUMNS.map((c) => String(x[c] ?? null))].join("|");
    const search = async (
      filter: Record<string, unknown>,
      range: { from: number; to: number },
      limit: number,
      sort?: string,
    ) => {
      const r = await fetch(`${api}/transactions/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          filter: { proto_type: 1, event_type: "call", ...filter },
          param: { limit, ...(sort ? { sort } : {}) },
          timestamp: range,
        }),
      });
      expect(r.status).toBe(200);
      const body = (await r.json()) as {
        data: { items: Item[] };
        meta: { pagination: { total: number; total_exact: boolean } };
      };
      return { rows: body.data.items.map((i) => row(i, i.timestamp_us)), ...body.meta.pagination };
    };
    const truth = async (where: string, range: { from: number; to: number }, limit: number, dir = "DESC") => {
      const inRange = `${where} AND timestamp BETWEEN make_timestamp(${range.from * 1000}) AND make_timestamp(${range.to * 1000})`;
      const rows = (
        await lake.query(
          `SELECT epoch_us(timestamp) AS ts, * EXCLUDE (timestamp) FROM svc_lake.main.hep_proto_1_call WHERE ${inRange} ORDER BY timestamp ${dir}, uuid ${dir} LIMIT ${limit}`,
        )
      ).rows.map((x) => row(x, x.ts));
      const n = (await lake.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE ${inRange}`)).rows[0]!
        .n;
      return { rows, total: Number(n) };
    };
    const all = { from: NOW_MS - 2 * 60 * MIN, to: NOW_MS + MIN };
    // The newest 30 rows of a window that ends inside the merged file's span.
    const past = { from: NOW_MS - 90 * MIN, to: NOW_MS - 65 * MIN };
    const cases: Array<{
      filter: Record<string, unknown>;
      where: string;
      range: typeof all;
      limit: number;
      paged: boolean;
      /** Found from the lookup columns' pages (src/api/search/lookup-pass.ts). */
      matched?: boolean;
      /** The merged file's rows in the window counted from its pages (src/lake/page-time.ts). */
      counted?: boolean;
      sort?: "timestamp";
    }> = [
      {
        filter: { call_id: "pg-13@test" },
        where: "session_id = 'pg-13@test'",
        range: all,
        limit: 100,
        paged: true,
        matched: true,
      },
      { filter: { from_user: "1002" }, where: "caller = '1002'", range: all, limit: 100, paged: true, matched: true },
      // The page is cut: the total still counts every match, the buffer's too.
      { filter: { from_user: "1002" }, where: "caller = '1002'", range: all, limit: 5, paged: true, matched: true },
      {
        filter: { from_user: "1002" },
        where: "caller = '1002'",
        range: all,
        limit: 5,
        paged: true,
        matched: true,
        sort: "timestamp",
      },
      // A window ending inside the merged file: rows after it are not matches.
      { filter: { from_user: "1003" }, where: "caller = '1003'", range: past, limit: 100, paged: true, matched: true },
      {
        filter: { call_id: "pg-13@test;pg-20@test", to_user: "5002" },
        where: "session_id IN ('pg-13@test', 'pg-20@test') AND callee = '5002'",
        range: all,
        limit: 100,
        paged: true,
        matched: true,
      },
      {
        filter: { ip: "10.6.1.5" },
        where: "(src_ip = '10.6.1.5' OR dst_ip = '10.6.1.5')",
        range: all,
        limit: 100,
        paged: true,
        matched: true,
      },
      // Another condition besides the lookups: DuckDB checks it, the pages are not matched.
      {
        filter: { from_user: "1002", method: "INVITE" },
        where: "caller = '1002' AND method = 'INVITE'",
        range: all,
        limit: 100,
        paged: true,
        matched: false,
      },
      { filter: {}, where: "true", range: past, limit: 30, paged: true, counted: true },
      // In the buffer only: DuckDB reads it as before.
      {
        filter: { call_id: `pg-${BATCHES * CALLS + 1}@test` },
        where: `session_id = 'pg-${BATCHES * CALLS + 1}@test'`,
        range: all,
        limit: 100,
        paged: false,
        matched: false,
      },
      // Both: the newest 100 over everything (buffer rows and the merged file's).
      { filter: {}, where: "true", range: all, limit: 100, paged: true },
    ];
    for (const c of cases) {
      const before = lake.pageStats()!.rows;
      const matchedBefore = lake.matchStats()!.files;
      const countedBefore = lake.timeStats()!.files;
      const got = await search(c.filter, c.range, c.limit, c.sort);
      const want = await truth(c.where, c.range, c.limit, c.sort ? "ASC" : "DESC");
      expect(got.rows.length).toBeGreaterThan(0);
      expect(got.rows).toEqual(want.rows);
      expect({ total: got.total, exact: got.total_exact }).toEqual({ total: want.total, exact: true });
      expect(lake.pageStats()!.rows > before).toBe(c.paged);
      if (c.matched !== undefined) expect(lake.matchStats()!.files > matchedBefore).toBe(c.matched);
      if (c.counted !== undefined) expect(lake.timeStats()!.files > countedBefore).toBe(c.counted);
    }
    // The call view reads a call of the merged file from its pages too, every column as DuckDB has
    // it; a call still in the buffer is DuckDB's.
    for (const id of ["pg-13@test", `pg-${BATCHES * CALLS + 1}@test`]) {
      const matchedBefore = lake.matchStats()!.files;
      const r = await fetch(`${api}/transactions/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ session_id: id, timestamp: all }),
      });
      expect(r.status).toBe(200);
      const items = ((await r.json()) as { data: { items: Item[] } }).data.items;
      const want = (
        await lake.query(
          `SELECT epoch_us(timestamp) AS ts, * EXCLUDE (timestamp) FROM svc_lake.main.hep_proto_1_call WHERE session_id = '${id}' ORDER BY timestamp, uuid`,
        )
      ).rows.map((x) => row(x, x.ts));
      expect(want).toHaveLength(7);
      expect(items.map((i) => row(i, i.timestamp_us))).toEqual(want);
      if (id === "pg-13@test") expect(lake.matchStats()!.files > matchedBefore).toBe(true);
    }
    expect(lake.pageStats()!.refused).toBe(0);
    // The merged file's footer was not read again.
    expect(await lake.files(key)).toHaveLength(1);
    expect({ lookups: lake.lookupStats()!.footers, layouts: lake.pageStats()!.layouts }).toEqual(afterWarm);
  }, 60_000);
});
