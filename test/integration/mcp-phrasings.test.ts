/**
 * What Ask understands, through a live appliance (docs/MCP.md "Filters", "Answers"): two callers'
 * calls sent as SIP in HEP over UDP (answered, busy, cancelled, failed), then questions an engineer
 * types; each answer must be exactly the messages the question names, and say what it understood.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { api, applianceConfig, type Api } from "./mcp-harness.ts";

const DAY_MS = 86_400_000;
let dir: TempDir;
let a: TestAppliance;
let http: Api;
/** The questions' clock: ten minutes after the first call, which is never before today's midnight (UTC). */
let nowMs = 0;
const id = crypto.randomUUID().slice(0, 8);
const cid = (name: string) => `ask-${name}-${id}@pbx`;
/** 1001 (10.41.0.1, svc-test UA): A1 answered, A2 busy, A3 answered. 3003 (10.42.0.1, Yealink): B1 busy, B2 cancelled, B3 503. */
const A = [cid("a1"), cid("a2"), cid("a3")];
const B = [cid("b1"), cid("b2"), cid("b3")];
const PBX = "10.41.0.9";

function messages(t0: number) {
  const out: Array<{ payload: string; at: number; src: string; dst: string }> = [];
  const call = (
    p: CallParams,
    src: string,
    at: number,
    outcome: "answered" | "busy" | "cancelled" | "503",
    yealink: boolean,
  ) => {
    const inv = invite({ ...p, srcIp: src });
    out.push({
      payload: yealink ? inv.replace("User-Agent: svc-test/1.0", "User-Agent: Yealink SIP-T46S 66.86.0.15") : inv,
      at,
      src,
      dst: PBX,
    });
    const reply = (code: number, reason: string, method = "INVITE", extra = 100) =>
      out.push({ payload: response(code, reason, method, { ...p, cseq: 1 }), at: at + extra, src: PBX, dst: src });
    const ack = () =>
      out.push({ payload: request("ACK", { ...p, cseq: 1, toTag: "ttag-1" }), at: at + 300, src, dst: PBX });
    if (outcome === "answered") {
      reply(200, "OK");
      ack();
      out.push({ payload: request("BYE", { ...p, toTag: "ttag-1" }), at: at + 2000, src, dst: PBX });
      out.push({ payload: response(200, "OK", "BYE", { ...p, cseq: 2 }), at: at + 2100, src: PBX, dst: src });
    } else if (outcome === "busy") {
      reply(486, "Busy Here");
      ack();
    } else if (outcome === "503") {
      reply(503, "Service Unavailable");
      ack();
    } else {
      out.push({ payload: request("CANCEL", { ...p, cseq: 1 }), at: at + 150, src, dst: PBX });
      reply(200, "OK", "CANCEL", 200);
      reply(487, "Request Terminated", "INVITE", 250);
      ack();
    }
  };
  call({ callId: A[0]!, from: "1001", to: "2002" }, "10.41.0.1", t0, "answered", false);
  call({ callId: A[1]!, from: "1001", to: "2002" }, "10.41.0.1", t0 + 10_000, "busy", false);
  call({ callId: A[2]!, from: "1001", to: "2002" }, "10.41.0.1", t0 + 20_000, "answered", false);
  call({ callId: B[0]!, from: "3003", to: "2002" }, "10.42.0.1", t0 + 30_000, "busy", true);
  call({ callId: B[1]!, from: "3003", to: "2002" }, "10.42.0.1", t0 + 40_000, "cancelled", true);
  call({ callId: B[2]!, from: "3003", to: "2002" }, "10.42.0.1", t0 + 50_000, "503", true);
  return out;
}

beforeAll(async () => {
  dir = tempDir();
  a = await startTestAppliance(dir.path, applianceConfig());
  const now = Date.now();
  const t0 = Math.max(Math.floor(now / DAY_MS) * DAY_MS, now - 10 * 60_000);
  nowMs = t0 + 10 * 60_000;
  const packets = messages(t0);
  const udp = await Bun.udpSocket({});
  for (const m of packets) {
    udp.send(
      encodeHep3({
        srcIp: m.src,
        dstIp: m.dst,
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: m.at * 1000,
        protoType: 1,
        captureId: 2001,
        payload: m.payload,
      }),
      a.app.ingest!.listeners.udp!.port(),
      "127.0.0.1",
    );
  }
  udp.close();
  const lake = a.app.lake!;
  await waitFor(
    "the calls in the lake",
    async () => {
      await lake.sync();
      if (!lake.table("main.hep_proto_1_call")) return false;
      const r = await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1", [
        `ask-%-${id}@pbx`,
      ]);
      return Number(r.rows[0]!.n) === packets.length;
    },
    30_000,
  );
  http = await api(a);
}, 90_000);

afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

type Row = {
  session_id: string;
  method: string | null;
  response_code: number | null;
  cseq_method: string | null;
  caller: string;
};
type Answer = {
  understood: boolean;
  ignored: string[];
  summary: string;
  total: number;
  items: Row[];
  normalized_filters: Record<string, unknown>;
  generated_sql?: string;
};

async function ask(question: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  const r = await http.call("POST", "/mcp/query", {
    query_text: question,
    parser: "regex",
    now_utc_unix_ms: nowMs,
    ...extra,
  });
  expect({ status: r.status, text: r.status === 200 ? "" : r.text }).toEqual({ status: 200, text: "" });
  return r.json as unknown as Answer;
}
/** Each row as session:what (method, or code/CSeq method), sorted. */
const rows = (x: Answer) =>
  x.items.map((r) => `${r.session_id}:${r.method ?? `${r.response_code}/${r.cseq_method}`}`).sort();
const each = (ids: string[], what: string) => ids.map((s) => `${s}:${what}`).sort();

describe("Ask answers the question that was asked", () => {
  test("INVITEs from 1001 in the last hour: exactly 1001's three INVITEs", async () => {
    const x = await ask("INVITEs from 1001 in the last hour");
    expect(rows(x)).toEqual(each(A, "INVITE"));
    expect(x.total).toBe(3);
    expect(x.normalized_filters).toMatchObject({ method: "INVITE", from_user: "1001", time_range_label: "last_hour" });
    expect([x.understood, x.ignored, x.summary]).toEqual([
      true,
      [],
      "Understood: method INVITE, from user 1001, last 1 h",
    ]);
  });

  test("show busy calls today / 486 responses today: exactly the two 486s, of both callers", async () => {
    const busy = await ask("show busy calls today");
    expect(rows(busy)).toEqual(each([A[1]!, B[0]!], "486/INVITE"));
    expect(busy.summary).toBe("Understood: busy calls (486 or 600 to INVITE), today (UTC)");
    expect(rows(await ask("486 responses today"))).toEqual(rows(busy));
    expect(rows(await ask("besetzte Anrufe von 3003 heute"))).toEqual(each([B[0]!], "486/INVITE"));
    const sql = await ask("show sql busy calls today");
    expect(sql.generated_sql).toContain("response_code IN (486, 600) AND cseq_method = 'INVITE'");
    expect(sql.items.map((r) => r.session_id).sort()).toEqual([A[1]!, B[0]!].sort());
  });

  test("show me call <Call-ID>: that call's messages only", async () => {
    expect(rows(await ask(`show me call ${A[0]}`))).toEqual(
      [`${A[0]}:200/BYE`, `${A[0]}:200/INVITE`, `${A[0]}:ACK`, `${A[0]}:BYE`, `${A[0]}:INVITE`].sort(),
    );
  });

  test("failed, cancelled, answered calls and response classes", async () => {
    expect(rows(await ask("failed calls from 3003"))).toEqual(
      [`${B[0]}:486/INVITE`, `${B[1]}:487/INVITE`, `${B[2]}:503/INVITE`].sort(),
    );
    expect(rows(await ask("cancelled calls"))).toEqual([`${B[1]}:487/INVITE`]);
    expect(rows(await ask("answered calls today"))).toEqual(each([A[0]!, A[2]!], "200/INVITE"));
    expect(rows(await ask("5xx errors"))).toEqual([`${B[2]}:503/INVITE`]);
    expect(rows(await ask("fehlgeschlagene Anrufe an 2002 heute"))).toHaveLength(4);
  });

  test("addresses with and without from/to, and the user agent", async () => {
    expect(rows(await ask(`INVITEs to ${PBX}`))).toEqual(each([...A, ...B], "INVITE"));
    const either = await ask("messages with 10.42.0.1");
    expect(new Set(either.items.map((r) => r.session_id))).toEqual(new Set(B));
    expect(either.items.some((r) => r.method === null)).toBe(true); // the PBX's responses to 10.42.0.1 too
    expect((await ask("from 10.42.0.1")).items.every((r) => r.method !== null)).toBe(true);
    expect(rows(await ask("INVITEs from Yealink"))).toEqual(each(B, "INVITE"));
  });

  test("ignored words are listed; a question with no filter says so and lists nothing", async () => {
    const x = await ask("please show INVITEs from 1001 with bad audio");
    expect(rows(x)).toEqual(each(A, "INVITE"));
    expect(x.ignored).toEqual(["bad", "audio"]);
    expect(x.summary).toBe("Understood: method INVITE, from user 1001, last 1 h (default) · Ignored: 'bad', 'audio'");
    for (const mode of ["structured", "sql"]) {
      const no = await ask("calls with one-way audio", { mode });
      expect([no.understood, no.total, no.items, no.ignored]).toEqual([false, 0, [], ["one-way", "audio"]]);
      expect(no.summary).toStartWith("Not understood: no word maps to a filter");
      expect(no.generated_sql).toBeUndefined();
    }
    // Filler only is a question for everything in the range.
    expect((await ask("show all calls")).total).toBe(17 + 4 + 3);
  });
});
