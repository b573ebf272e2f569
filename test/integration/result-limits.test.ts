/**
 * coordinator.query.max_result_bytes beyond user SQL (docs/ARCHITECTURE.md "Query path"): the
 * search, the call view and the export stream their rows from DuckDB and answer 413 once the
 * JSON of the rows passes the budget, saying how to narrow the request; a request under it is
 * complete. The data comes in through the PCAP import: one call of 300 messages of ≈ 4.3 KB
 * (≈ 1.3 MB, over this appliance's 1 MiB) and a small call of 3.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { request } from "../fixtures/sip.ts";
import { tempDir, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance } from "./export-helpers.ts";

const MAX_RESULT_BYTES = 1 << 20;
const T0_US = (Date.now() - 600_000) * 1000;
const BIG = "limits-big@test";
const SMALL = "limits-small@test";
const enc = new TextEncoder();

let dir: TempDir;
let s: ApiAppliance;

function message(callId: string, i: number, padBytes: number): PcapRecord {
  const text = request("INVITE", { callId, from: "alice", to: "bob", cseq: i + 1 }).replace(
    "\r\n",
    `\r\nX-Pad: ${"p".repeat(padBytes)}\r\n`,
  );
  return {
    timestampUs: T0_US + i * 1000,
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    payload: enc.encode(text),
  };
}

const timestamp = { from: Math.floor(T0_US / 1000) - 60_000, to: Math.floor(T0_US / 1000) + 600_000 };

beforeAll(async () => {
  dir = tempDir();
  s = await startWithApi(dir.path, { coordinator: { query: { max_result_bytes: MAX_RESULT_BYTES } } });
  const records = [
    ...Array.from({ length: 300 }, (_x, i) => message(BIG, i, 4000)),
    ...Array.from({ length: 3 }, (_x, i) => message(SMALL, 400 + i, 10)),
  ];
  const form = new FormData();
  form.append("file", new File([writePcap(records).slice()], "limits.pcap"));
  const r = await s.api.call("POST", "/imports/pcap", form);
  expect(r.status).toBe(201);
  expect(r.json!.data).toMatchObject({ imported: 303 });
}, 60_000);

afterAll(async () => {
  await s?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

function expectTooLarge(r: { status: number; json: { error?: string; message?: string } | undefined }, hint: RegExp) {
  expect(r.status).toBe(413);
  expect(r.json).toMatchObject({
    error: "PAYLOAD_TOO_LARGE",
    reason: "max_result_bytes",
    max_result_bytes: MAX_RESULT_BYTES,
  });
  expect(r.json!.message).toContain(`coordinator.query.max_result_bytes (${MAX_RESULT_BYTES} bytes of JSON)`);
  expect(r.json!.message).toMatch(hint);
}

describe("coordinator.query.max_result_bytes outside user SQL", () => {
  test("the call view of a call over the budget is a 413 saying how to narrow it; a small call is complete", async () => {
    expectTooLarge(
      await s.api.call("POST", "/transactions/messages", { session_id: BIG, timestamp }),
      /narrow the time range or select fewer Call-IDs/,
    );
    const small = await s.api.call("POST", "/transactions/messages", { session_id: SMALL, timestamp });
    expect(small.status).toBe(200);
    expect(small.json!.data!.items!.map((m) => m.timestamp_us)).toEqual([400, 401, 402].map((i) => T0_US + i * 1000));
  });

  test("the export of that call is the same 413, before any file is built", async () => {
    expectTooLarge(
      await s.api.call("POST", "/transactions/export/pcap", { session_id: [BIG], timestamp }),
      /narrow the time range/,
    );
    const small = await s.api.call("POST", "/transactions/export/pcap", { session_id: [SMALL], timestamp });
    expect(small.status).toBe(200);
  });

  test("a search whose rows pass the budget is a 413 naming param.limit; a lower limit is answered in full", async () => {
    const search = (limit: number) =>
      s.api.call("POST", "/transactions/search", {
        filter: { proto_type: 1, event_type: "call", call_id: BIG },
        param: { limit },
        timestamp,
      });
    expectTooLarge(await search(1000), /lower param\.limit/);
    const fifty = await search(50);
    expect(fifty.status).toBe(200);
    expect(fifty.json!.data!.items!.length).toBe(50);
  });
});
