import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import {
  callMessages,
  mosReport,
  registerMessages,
  rtcpReport,
  type KpiCall,
  type Outcome,
  type Sent,
} from "../fixtures/kpi-calls.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";

/**
 * Call-quality KPIs (docs/KPIS.md) from calls with declared outcomes sent as HEP
 * over UDP. Every expected figure is computed here from the declarations (outcome, ring, answer
 * and BYE times), never through the code under test.
 */
const PASSWORD = "kpi-test-password";
const MIN = 60_000;
const NOW = Date.now();
const W0 = NOW - 30 * MIN;
const W1 = NOW;

const call = (
  id: string,
  atMin: number,
  to: string,
  outcome: Outcome,
  code: number | null,
  t: Partial<KpiCall> = {},
): KpiCall => ({
  callId: `${id}@kpi.test`,
  to,
  t0: W0 + atMin * MIN,
  node: 7,
  outcome,
  code,
  ...t,
});

const CALLS: KpiCall[] = [
  call("a1", 2, "1001", "answered", 200, { ringMs: 300, answerMs: 2_000, byeMs: 62_000 }),
  call("a2", 3, "1002", "answered", 200, { ringMs: 1_200, answerMs: 4_000, byeMs: 34_000 }),
  call("a3", 12, "1003", "answered", 200, { answerMs: 800 }),
  call("b1", 4, "1004", "busy", 486, { ringMs: 300 }),
  call("b2", 13, "1005", "busy", 600),
  call("n1", 14, "1006", "no_answer", 480, { ringMs: 300 }),
  call("r1", 15, "1007", "rejected", 603),
  call("c1", 5, "1008", "cancelled", 487, { ringMs: 400 }),
  call("c2", 16, "1009", "cancelled", null, { ringMs: 400 }),
  call("d1", 6, "7777", "redirected", 302),
  call("f1", 7, "5555", "failed", 503),
  call("f2", 22, "5555", "failed", 503),
  call("f3", 23, "6666", "failed", 404),
  call("f4", 24, "5555", "failed", 408),
  call("x1", 24.5, "6666", "no_response", null),
  call("l1", 27, "1010", "answered", 200, { ringMs: 200, answerMs: 1_000, byeMs: 21_000 }),
  call("l2", 28, "1011", "busy", 486, { ringMs: 100 }),
  { callId: "p1@kpi.test", to: "1012", t0: NOW - 30_000, node: 7, outcome: "pending", code: null },
  call("m1", 8, "1013", "answered", 200, { node: 8, ringMs: 100, answerMs: 1_000, byeMs: 11_000 }),
];
/** Answered before the window; its re-INVITE falls inside and must not count as a call. */
const BEFORE: KpiCall = call("o1", -10, "1014", "answered", 200, { answerMs: 2_000 });

const REGS = [
  { callId: "reg1", cseq: 1, codes: [401], outcome: "challenged", at: 2 },
  { callId: "reg1", cseq: 2, codes: [200], outcome: "success", at: 2.1 },
  { callId: "reg2", cseq: 1, codes: [403], outcome: "failed", at: 9 },
  { callId: "reg3", cseq: 7, codes: [200], outcome: "success", at: 11 },
  { callId: "reg4", cseq: 1, codes: [], outcome: "no_response", at: 20 },
];
/** Reports of answered calls (by correlation id), during those calls. */
const RTCP = [
  { at: 3, jitter: 80, fl: 0, callId: "a2@kpi.test" },
  { at: 12.2, jitter: 240, fl: 64, callId: "a3@kpi.test" },
];
const MOS = [
  { mos: 410, callId: "a1@kpi.test" },
  { mos: 350, callId: "a2@kpi.test" },
];

const NER_SET: Outcome[] = ["answered", "busy", "no_answer", "rejected", "cancelled"];
const FAIL_SET: Outcome[] = ["redirected", "failed", "no_response"];
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The KPIs of some declared calls, by hand (docs/KPIS.md formulas). */
function expected(calls: KpiCall[]) {
  const count = (o: Outcome) => calls.filter((c) => c.outcome === o).length;
  const completed = calls.length - count("pending");
  return {
    attempts: calls.length,
    answered: count("answered"),
    asr: completed ? count("answered") / completed : null,
    ner: completed ? calls.filter((c) => NER_SET.includes(c.outcome)).length / completed : null,
    acd_s: mean(calls.filter((c) => c.byeMs !== undefined).map((c) => (c.byeMs! - c.answerMs!) / 1000)),
    pdd_ms: mean(
      calls.flatMap((c) =>
        (c.ringMs ?? c.answerMs) === undefined ? [] : [Math.min(c.ringMs ?? Infinity, c.answerMs ?? Infinity)],
      ),
    ),
    setup_ms: mean(calls.flatMap((c) => (c.answerMs === undefined ? [] : [c.answerMs]))),
  };
}

async function sendAll(a: Awaited<ReturnType<typeof startTestAppliance>>, batches: Sent[][]): Promise<void> {
  const { ingest, lake } = a.app;
  const udp = await Bun.udpSocket({});
  const port = ingest!.listeners.udp!.port();
  const tables = ["hep_proto_1_call", "hep_proto_1_registration", "hep_proto_5_default", "hep_proto_34_default"];
  const stored = async () => {
    await lake!.sync();
    let n = 0;
    for (const t of tables) n += Number((await lake!.query(`SELECT count(*) AS n FROM svc_lake.main.${t}`)).rows[0]!.n);
    return n;
  };
  let sent = 0;
  for (const batch of batches) {
    for (const m of batch) udp.send(m.packet, port, "127.0.0.1");
    sent += batch.length;
    await waitFor("every message stored", async () => (await stored()) === sent);
    await lake!.flush(); // the first batch read from Parquet, the last one too (both paths)
  }
  udp.close();
}

describe("call-quality KPIs", () => {
  test("GET /statistics/kpi and /statistics/kpi/destinations: exact figures from declared calls, node filter, steps, bad input", async () => {
    await using dir = tempDir("svc-kpi-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      storage: { lakehouse: { flush_interval_sec: 3600 } },
    });
    const callPackets = [
      ...CALLS.flatMap((c) =>
        callMessages(
          c,
          c.callId.startsWith("a2")
            ? { auth: true, reinviteAtMs: 10_000 }
            : c.callId.startsWith("c2")
              ? { cancelWithout487: true }
              : {},
        ),
      ),
      ...callMessages(BEFORE, { reinviteAtMs: 11 * MIN }),
    ];
    const other = [
      ...REGS.flatMap((r) =>
        registerMessages({
          callId: r.callId,
          user: "alice",
          cseq: r.cseq,
          atMs: W0 + r.at * MIN,
          node: 7,
          codes: r.codes,
        }),
      ),
      ...RTCP.map((r) => rtcpReport(W0 + r.at * MIN, 7, r.jitter, r.fl, r.callId)),
      ...MOS.map((m, i) => mosReport(W0 + (2 + i) * MIN + 30_000, 7, m.mos, m.callId)),
    ];
    await sendAll(a, [callPackets, other]);

    const api = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const get = async (path: string) => {
      const r = await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } });
      return {
        status: r.status,
        json: (await r.json()) as { data: Record<string, any>; error?: string; message?: string },
      };
    };

    const r = await get(`/statistics/kpi?from=${W0}&to=${W1}&step=10m`);
    expect(r.status).toBe(200);
    const tot = r.json.data.totals;
    const want = expected(CALLS);
    expect({ attempts: tot.attempts, answered: tot.outcomes.answered }).toEqual({
      attempts: want.attempts,
      answered: want.answered,
    });
    for (const o of [
      "answered",
      "busy",
      "no_answer",
      "rejected",
      "cancelled",
      "redirected",
      "failed",
      "no_response",
      "pending",
    ] as Outcome[]) {
      expect({ o, n: tot.outcomes[o] }).toEqual({ o, n: CALLS.filter((c) => c.outcome === o).length });
    }
    expect(tot.asr).toBeCloseTo(want.asr!, 9);
    expect(tot.ner).toBeCloseTo(want.ner!, 9);
    expect(tot.acd_s).toBeCloseTo(want.acd_s!, 6);
    expect(tot.pdd_ms).toBeCloseTo(want.pdd_ms!, 3);
    expect(tot.setup_ms).toBeCloseTo(want.setup_ms!, 3);
    // Response-code mix: the declared final codes of the completed calls.
    const mix = new Map<number | null, number>();
    for (const c of CALLS) if (c.outcome !== "pending") mix.set(c.code, (mix.get(c.code) ?? 0) + 1);
    expect(r.json.data.response_codes).toEqual(
      [...mix].map(([code, calls]) => ({ code, calls })).sort((x, y) => (x.code ?? 1000) - (y.code ?? 1000)),
    );
    // Registrations, RTCP, MOS.
    for (const o of ["success", "challenged", "failed", "no_response"])
      expect({ o, n: tot.registrations[o] }).toEqual({ o, n: REGS.filter((x) => x.outcome === o).length });
    const regOk = REGS.filter((x) => x.outcome === "success").length;
    expect(tot.registration_success_ratio).toBeCloseTo(
      regOk / REGS.filter((x) => x.outcome !== "challenged").length,
      9,
    );
    expect(tot.rtcp_reports).toBe(RTCP.length);
    expect(tot.jitter_ms_avg).toBeCloseTo(mean(RTCP.map((x) => x.jitter / 8))!, 6);
    expect(tot.jitter_ms_max).toBeCloseTo(Math.max(...RTCP.map((x) => x.jitter / 8)), 6);
    expect(tot.loss_pct_avg).toBeCloseTo(mean(RTCP.map((x) => (x.fl / 256) * 100))!, 6);
    expect(tot.mos_avg).toBeCloseTo(mean(MOS.map((m) => m.mos / 100))!, 6);
    expect(tot.mos_min).toBeCloseTo(Math.min(...MOS.map((m) => m.mos)) / 100, 6);

    // Series: 10-minute steps from the last multiple of 10 minutes at or before W0.
    const origin = Math.floor(W0 / (10 * MIN)) * 10 * MIN;
    const series = r.json.data.series as Array<{ start_ms: number; attempts: number; asr: number | null }>;
    expect(series.map((s) => s.start_ms)).toEqual(
      Array.from({ length: Math.ceil((W1 - origin) / (10 * MIN)) }, (_x, i) => origin + i * 10 * MIN),
    );
    series.forEach((s, i) => {
      const inStep = CALLS.filter((c) => Math.min(series.length - 1, Math.floor((c.t0 - origin) / (10 * MIN))) === i);
      expect({ i, attempts: s.attempts, asr: s.asr === null ? null : Number(s.asr.toFixed(9)) }).toEqual({
        i,
        attempts: inStep.length,
        asr: expected(inStep).asr === null ? null : Number(expected(inStep).asr!.toFixed(9)),
      });
    });

    // Steps aligned in a zone east of UTC: a 1d step starts at that zone's midnight.
    const DAY = 1_440 * MIN;
    const local = await get(`/statistics/kpi?from=${W0}&to=${W1}&step=1d&utc_offset_min=120`);
    expect(local.json.data.series[0].start_ms).toBe(Math.floor((W0 + 120 * MIN) / DAY) * DAY - 120 * MIN);
    expect(local.json.data.totals.attempts).toBe(CALLS.length);
    expect((await get(`/statistics/kpi?utc_offset_min=900`)).status).toBe(400);

    // Node filter: node 8 only.
    const n8 = await get(`/statistics/kpi?from=${W0}&to=${W1}&node=8`);
    const want8 = expected(CALLS.filter((c) => c.node === 8));
    expect({
      attempts: n8.json.data.totals.attempts,
      asr: n8.json.data.totals.asr,
      acd: n8.json.data.totals.acd_s,
      node: n8.json.data.node,
    }).toEqual({
      attempts: want8.attempts,
      asr: want8.asr,
      acd: want8.acd_s,
      node: 8,
    });

    // Top failing destinations, bounded.
    const d = await get(`/statistics/kpi/destinations?from=${W0}&to=${W1}&limit=2`);
    expect(d.status).toBe(200);
    const byDest = new Map<string, KpiCall[]>();
    for (const c of CALLS) if (c.outcome !== "pending") byDest.set(c.to, [...(byDest.get(c.to) ?? []), c]);
    const ranked = [...byDest]
      .map(([destination, cs]) => ({
        destination,
        attempts: cs.length,
        failures: cs.filter((c) => FAIL_SET.includes(c.outcome)).length,
      }))
      .filter((x) => x.failures > 0)
      .sort((x, y) => y.failures - x.failures || (x.destination < y.destination ? -1 : 1))
      .slice(0, 2);
    expect(
      d.json.data.items.map((x: { destination: string; attempts: number; failures: number }) => ({
        destination: x.destination,
        attempts: x.attempts,
        failures: x.failures,
      })),
    ).toEqual(ranked);
    expect(d.json.data.items[0].top_code).toBe(503);

    // An empty window: zero counts and null ratios, not an error.
    const empty = await get(`/statistics/kpi?from=${W0 - 120 * MIN}&to=${W0 - 90 * MIN}`);
    expect({
      status: empty.status,
      attempts: empty.json.data.totals.attempts,
      asr: empty.json.data.totals.asr,
      acd: empty.json.data.totals.acd_s,
    }).toEqual({
      status: 200,
      attempts: 0,
      asr: null,
      acd: null,
    });

    // Bad input: 400 with a message naming the member.
    for (const [q, member] of [
      [`step=abc`, "step"],
      [`from=${W1}&to=${W0}`, "from"],
      [`from=yesterday`, "from"],
      [`from=0&step=1s`, "step"],
      [`node=`, "node"],
    ] as const) {
      const bad = await get(`/statistics/kpi?${q}`);
      expect({ q, status: bad.status, names: (bad.json.message ?? "").includes(member) }).toEqual({
        q,
        status: 400,
        names: true,
      });
    }
    expect((await fetch(`${api}/statistics/kpi`)).status).toBe(401); // behind the login like every statistic
    for (const q of ["limit=0", "limit=101", "limit=x"])
      expect({ q, status: (await get(`/statistics/kpi/destinations?${q}`)).status }).toEqual({ q, status: 400 });
  }, 60_000);

  peerTest(
    "/metrics: svc_kpi_* series of the last 5 minutes, bounded labels, promtool clean",
    [PEERS.promtool],
    async () => {
      await using dir = tempDir("svc-kpi-prom-");
      await using a = await startTestAppliance(dir.path);
      const recent = CALLS.filter((c) => c.t0 >= NOW - 5 * MIN);
      await sendAll(a, [recent.flatMap((c) => callMessages(c))]);
      // A scrape waits up to 3 s for the computation, then shows the last values: scrape until computed.
      const body = await waitFor("the svc_kpi_ series computed", async () => {
        const text = await (await fetch(`${a.app.coordinatorUrl}/metrics`)).text();
        return text.includes('svc_kpi_call_attempts{window="5m"}') ? text : undefined;
      });
      const want = expected(recent);
      const value = (series: string) =>
        Number(
          body
            .split("\n")
            .find((l) => l.startsWith(`${series} `))
            ?.split(" ")[1],
        );
      expect(value('svc_kpi_call_attempts{window="5m"}')).toBe(want.attempts);
      expect(value('svc_kpi_asr_ratio{window="5m"}')).toBeCloseTo(want.asr!, 9);
      expect(value('svc_kpi_ner_ratio{window="5m"}')).toBeCloseTo(want.ner!, 9);
      expect(value('svc_kpi_calls{window="5m",outcome="pending"}')).toBe(
        recent.filter((c) => c.outcome === "pending").length,
      );
      expect(body).not.toContain("kpi.test"); // never a Call-ID or a user as a label
      const proc = Bun.spawn(["promtool", "check", "metrics"], {
        stdin: new Blob([body]),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      expect((out + err).trim()).toBe("");
      expect(code).toBe(0);
    },
    60_000,
  );
});
