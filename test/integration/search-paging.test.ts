/**
 * docs/ARCHITECTURE.md "Totals and paging of the search lists" over real HEP ingest (UDP) and a line-protocol write into the SIP table:
 * `meta.pagination.total` counts every match of the window (not the page), `has_more` and
 * `next_cursor` page through the exact order (timestamp, then uuid) without a duplicate or a gap,
 * on POST /transactions/search and GET /transactions, newest or oldest first; a filtered count
 * stops at `count_cap`; bad cursors and sorts are 4xx with a message; `capture_id` matches
 * node_id or data_extra.capture_id; PUT /me/settings/{category} answers an IdResponse.
 * Rows sit in two Parquet files and the buffer, so the count from statistics, the count of the
 * files crossing the window's edges and the buffer are all exercised.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import type { ApiResult } from "./export-helpers.ts";
import { lpWrite, startLineProtocol } from "./lineproto-helpers.ts";

// The rows lie 40 to 20 minutes before "now": in the first 45 minutes of a UTC day "now" is the
// end of the day before, so they stay in one date partition (the test counts files).
const DAY_START_MS = Math.floor(Date.now() / 86_400_000) * 86_400_000;
const NOW_MS = Date.now() - DAY_START_MS < 45 * 60_000 ? DAY_START_MS - 60_000 : Date.now();
const T0_MS = NOW_MS - 40 * 60_000;
const HEP_ROWS = 60;
const COUNT_CAP = 20;
/** Row i at T0 + 20 s·i; every row i ≡ 1 (mod 10) at the same microsecond as row i − 1 (a tie). */
const atUs = (i: number) => (T0_MS + 20_000 * (i % 10 === 1 ? i - 1 : i)) * 1000 + 7;
const RANGE = { from: NOW_MS - 2 * 3_600_000, to: NOW_MS + 60_000 }; // wider than an hour: the `newest` strategy
const LP_CALL = "pg-lp@lineproto";

type Item = Record<string, unknown>;
interface Pagination {
  limit: number;
  offset: number;
  total: number;
  total_exact: boolean;
  has_more: boolean;
  next_cursor: string | null;
}

let dir: TempDir;
let s: Awaited<ReturnType<typeof startLineProtocol>>;

const items = (r: ApiResult) => (r.json?.data?.items ?? []) as Item[];
const pagination = (r: ApiResult) => (r.json as unknown as { meta: { pagination: Pagination } }).meta.pagination;
const search = (
  filter: Record<string, unknown>,
  param: Record<string, unknown>,
  range: { from: number; to: number } = RANGE,
) =>
  s.api.call("POST", "/transactions/search", {
    filter: { proto_type: 1, event_type: "call", ...filter },
    param,
    timestamp: range,
  });
const list = (q: Record<string, string | number>) =>
  s.api.call(
    "GET",
    `/transactions?${new URLSearchParams(Object.entries({ from: RANGE.from, to: RANGE.to, ...q }).map(([k, v]) => [k, String(v)]))}`,
  );

/** The reference: one plain ordered statement over the table's view (what `full` reads). */
async function referenceUuids(
  range: { from: number; to: number },
  where = "true",
  params: Array<string | number> = [],
): Promise<string[]> {
  const lake = s.a.app.lake!;
  await lake.sync();
  const r = await lake.query(
    `SELECT uuid FROM svc_lake.main.hep_proto_1_call WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND (${where}) ORDER BY "timestamp" DESC, uuid DESC`,
    [range.from * 1000, range.to * 1000, ...params],
  );
  return r.rows.map((x) => String(x.uuid));
}

/** Every page of a paged request, following next_cursor; fails on a loop. */
async function allPages(
  first: () => Promise<ApiResult>,
  next: (cursor: string) => Promise<ApiResult>,
): Promise<{ uuids: string[]; pages: Pagination[] }> {
  const uuids: string[] = [];
  const pages: Pagination[] = [];
  let r = await first();
  for (;;) {
    expect(r.status).toBe(200);
    uuids.push(...items(r).map((i) => String(i.uuid)));
    const p = pagination(r);
    pages.push(p);
    if (!p.next_cursor) return { uuids, pages };
    if (pages.length > 40) throw new Error("paging does not end");
    r = await next(p.next_cursor);
  }
}

beforeAll(async () => {
  dir = tempDir("svc-search-paging-");
  s = await startLineProtocol(
    dir.path,
    { allow_hep_sip_call: true },
    { storage: { lakehouse: { flush_interval_sec: 3600, search: { count_cap: COUNT_CAP } } } },
  );
  const lake = s.a.app.lake!;
  const udp = await Bun.udpSocket({});
  const port = s.a.app.ingest!.listeners.udp!.port();
  const send = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const payload = invite({
        callId: `pg-${i}@test`,
        from: i % 3 === 0 ? "1001" : "2002",
        to: "3000",
        fromTag: `f${i}`,
      });
      udp.send(
        encodeHep3({
          srcIp: "10.7.0.1",
          dstIp: "10.7.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: atUs(i),
          protoType: 1,
          captureId: i % 5 === 0 ? 11 : 9,
          payload,
        }),
        port,
        "127.0.0.1",
      );
    }
    await waitFor(`rows before ${to} visible`, async () => {
      await lake.sync();
      return (
        Number(
          (
            await lake.query(
              "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'pg-%@test'",
            )
          ).rows[0]!.n,
        ) === to
      );
    });
  };
  // Two Parquet files, then rows left in the buffer.
  await send(0, 25);
  await lake.flush();
  await send(25, 45);
  await lake.flush();
  await send(45, HEP_ROWS);
  udp.close();
  expect((await lake.files("main.hep_proto_1_call")).length).toBe(2);
  // A row written by another writer: the capture id only in data_extra (node_id says 5).
  const lpMs = T0_MS + 5_000;
  const lp = await lpWrite(
    s.lpUrl,
    "/write?precision=ms",
    `hep_proto_1_call,src_ip=10.7.0.9,dst_ip=10.7.0.2 session_id="${LP_CALL}",caller="4004",callee="3000",method="INVITE",event="INVITE",node_id=5i,data_extra="{\\"capture_id\\":77}",payload="INVITE sip:3000@x SIP/2.0" ${lpMs}`,
  );
  expect(lp.status).toBe(204);
  await waitFor("the line-protocol row visible", async () => (await referenceUuids(RANGE)).length === HEP_ROWS + 1);
}, 60_000);

afterAll(async () => {
  await s?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

describe("search totals and paging", () => {
  test("POST: total counts the whole window, next_cursor pages through the exact newest-first order", async () => {
    const ref = await referenceUuids(RANGE);
    expect(ref).toHaveLength(HEP_ROWS + 1);
    const first = await search({}, { limit: 7 });
    expect(pagination(first)).toEqual({
      limit: 7,
      offset: 0,
      total: HEP_ROWS + 1,
      total_exact: true,
      has_more: true,
      next_cursor: "7:-timestamp",
    });
    const { uuids, pages } = await allPages(
      () => Promise.resolve(first),
      (cursor) => search({}, { limit: 7, cursor }),
    );
    expect(uuids).toEqual(ref);
    expect(pages.map((p) => p.offset)).toEqual([0, 7, 14, 21, 28, 35, 42, 49, 56]);
    expect(pages.every((p) => p.total === HEP_ROWS + 1 && p.total_exact)).toBe(true);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, true, true, true, true, true, true, false]);
    // Row ids continue across pages.
    expect(items(await search({}, { limit: 3, cursor: "7:-timestamp" })).map((i) => i.id)).toEqual([8, 9, 10]);
  });

  test("oldest first, on POST and on GET /transactions (page[cursor], sort); a cursor alone keeps its order", async () => {
    const ref = await referenceUuids(RANGE);
    const oldest = [...ref].reverse();
    const post = await allPages(
      () => search({}, { limit: 11, sort: "timestamp" }),
      (cursor) => search({}, { limit: 11, cursor }),
    );
    expect(post.uuids).toEqual(oldest);
    const get = await allPages(
      () => list({ "page[limit]": 9, sort: "timestamp" }),
      (cursor) => list({ "page[limit]": 9, "page[cursor]": cursor, sort: "timestamp" }),
    );
    expect(get.uuids).toEqual(oldest);
    expect(get.pages[0]).toMatchObject({ total: HEP_ROWS + 1, has_more: true, next_cursor: "9:timestamp" });
    const newest = await allPages(
      () => list({ "page[limit]": 25 }),
      (cursor) => list({ "page[limit]": 25, "page[cursor]": cursor }),
    );
    expect(newest.uuids).toEqual(ref);
    expect(items(await list({ "page[limit]": 4, "page[cursor]": "9:timestamp" })).map((i) => String(i.uuid))).toEqual(
      oldest.slice(9, 13),
    );
    expect(
      items(await list({ "page[limit]": 4, "page[cursor]": "9:-timestamp", sort: "-timestamp" })).map((i) =>
        String(i.uuid),
      ),
    ).toEqual(ref.slice(9, 13));
  });

  test("without a filter the total is exact for windows cutting through files and the buffer", async () => {
    for (const [lo, hi] of [
      [3, 50],
      [10, 30],
      [26, 44],
      [30, 59],
      [0, 12],
    ] as const) {
      const range = { from: Math.floor(atUs(lo) / 1000), to: Math.ceil(atUs(hi) / 1000) };
      const want = await referenceUuids(range);
      expect(want.length).toBeGreaterThan(3);
      const r = await search({}, { limit: 3 }, range);
      expect({ lo, hi, p: pagination(r) }).toEqual({
        lo,
        hi,
        p: { limit: 3, offset: 0, total: want.length, total_exact: true, has_more: true, next_cursor: "3:-timestamp" },
      });
      expect(items(r).map((i) => String(i.uuid))).toEqual(want.slice(0, 3));
    }
    // A page holding every match needs no count and says so.
    expect(pagination(await search({}, { limit: 100 }))).toEqual({
      limit: 100,
      offset: 0,
      total: HEP_ROWS + 1,
      total_exact: true,
      has_more: false,
      next_cursor: null,
    });
  });

  test("a filtered total is exact up to count_cap, beyond it a lower bound (total_exact false, has_more true)", async () => {
    const ones = await referenceUuids(RANGE, "caller = $3", ["1001"]);
    expect(ones).toHaveLength(COUNT_CAP);
    const exact = await search({ from_user: "1001" }, { limit: 6 });
    expect(pagination(exact)).toMatchObject({ total: COUNT_CAP, total_exact: true, has_more: true });
    const twos = await referenceUuids(RANGE, "caller = $3", ["2002"]);
    expect(twos.length).toBeGreaterThan(COUNT_CAP);
    const capped = await search({ from_user: "2002" }, { limit: 6 });
    expect(pagination(capped)).toMatchObject({
      total: COUNT_CAP,
      total_exact: false,
      has_more: true,
      next_cursor: "6:-timestamp",
    });
    expect(items(capped).map((i) => String(i.uuid))).toEqual(twos.slice(0, 6));
    // Paging a filtered search reaches every match even past the cap.
    const all = await allPages(
      () => Promise.resolve(capped),
      (cursor) => search({ from_user: "2002" }, { limit: 6, cursor }),
    );
    expect(all.uuids).toEqual(twos);
    expect(all.pages.at(-1)).toMatchObject({
      total: twos.length,
      total_exact: true,
      has_more: false,
      next_cursor: null,
    });
  });

  test("capture_id matches node_id or data_extra.capture_id (POST and GET)", async () => {
    const sids = async (capture: string | number) =>
      items(await search({ capture_id: capture }, { limit: 100 }))
        .map((i) => String(i.sid))
        .sort();
    const elevens = Array.from({ length: HEP_ROWS }, (_x, i) => i)
      .filter((i) => i % 5 === 0)
      .map((i) => `pg-${i}@test`)
      .sort();
    expect(await sids(77)).toEqual([LP_CALL]); // data_extra only
    expect(await sids(5)).toEqual([LP_CALL]); // node_id only
    expect(await sids(11)).toEqual(elevens); // HEP: both
    expect(await sids("77;11")).toEqual([LP_CALL, ...elevens].sort());
    const get = await list({ capture_id: 77 });
    expect(items(get).map((i) => i.sid)).toEqual([LP_CALL]);
    expect(pagination(get)).toMatchObject({ total: 1, has_more: false });
  });

  test("bad cursors and sorts are 400 (409 for a cursor of the other sort) with a message naming the member", async () => {
    const cases: Array<[Promise<ApiResult>, number, RegExp]> = [
      [search({}, { limit: 5, sort: "size" }), 400, /^param\.sort: expected one of -timestamp, timestamp/],
      [search({}, { limit: 5, cursor: "abc" }), 400, /^param\.cursor: not a cursor of this list/],
      [search({}, { limit: 5, cursor: 7 }), 400, /^param\.cursor: not a cursor of this list/],
      [search({}, { limit: 5, cursor: "50000:-timestamp" }), 400, /^param\.cursor: pages reach the first 50000 rows/],
      [
        search({}, { limit: 5, cursor: "5:timestamp", sort: "-timestamp" }),
        409,
        /^param\.cursor: the cursor was made for sort=timestamp/,
      ],
      [list({ sort: "uuid" }), 400, /sort/],
      [list({ "page[cursor]": "1:uuid" }), 400, /^page\[cursor\]: not a cursor of this list/],
      [list({ "page[cursor]": "x" }), 400, /^page\[cursor\]: not a cursor of this list/],
      [
        list({ "page[cursor]": "3:-timestamp", sort: "timestamp" }),
        409,
        /^page\[cursor\]: the cursor was made for sort=-timestamp/,
      ],
      [list({ capture_id: "edge" }), 400, /capture_id/],
    ];
    for (const [req, status, message] of cases) {
      const r = await req;
      expect({ status: r.status, message: r.json?.message }).toEqual({
        status,
        message: expect.stringMatching(message),
      });
    }
  });

  test("PUT /me/settings/{category} answers an IdResponse; the id stays on a repeat", async () => {
    const put = (category: string, param: string, data: Record<string, unknown>) =>
      s.api.call("PUT", `/me/settings/${category}`, { param, data });
    const first = await put("transaction", "range", { from: -60_000 });
    expect(first.status).toBe(200);
    const body = first.json as {
      data: { id: string; category: string; param: string; data: Record<string, unknown> };
      message: string;
    };
    expect(body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.message).toBe("setting saved");
    expect(body.data).toMatchObject({ category: "transaction", param: "range", data: { from: -60_000, to: 300_000 } });
    const again = await put("transaction", "range", { from: -1_000 });
    expect((again.json as typeof body).data.id).toBe(body.data.id);
    const other = await put("ui", "theme", { mode: "dark" });
    expect((other.json as typeof body).data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((other.json as typeof body).data.id).not.toBe(body.data.id);
  });
});
