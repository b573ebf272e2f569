/**
 * Call KPIs (docs/KPIS.md) on real traffic: sipp calls through Kamailio (test/fixtures/kamailio/kpi-proxy.cfg),
 * mirrored to the appliance as HEP by Kamailio's siptrace (every message, both legs). Three sipp
 * UAS behind the proxy: the built-in uas answers (200), a 486 UAS and a 503 UAS
 * (test/fixtures/sipp/uas-final.xml) refuse after ringing (Kamailio turns the 503 into a 500 for
 * the caller, RFC 3261 §16.7). The KPIs must match what sipp was told
 * to do: attempts, ASR, NER, response codes, failing destinations; ACD and PDD must equal the
 * means computed here from the stored messages of each call, and respect the scenario's pauses.
 */
import { expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { startKamailio } from "../peers/kamailio.ts";
import { freeUdpPort, freeUdpPorts, spawnPeer, waitUdpListening } from "../peers/process.ts";
import { startSippUas } from "../peers/sipp.ts";

const PASSWORD = "kpi-sipp-password";
const FIXTURES = join(import.meta.dir, "../fixtures/sipp");
const ANSWERED = 6;
const BUSY = 3;
const FAILED = 2;
/** How long each answered call lasts (sipp -d: its `pause` between ACK and BYE), and how long the refusing UAS rings. */
const HOLD_MS = 1_500;
const RING_MS = 300;

function scenario(dir: string, file: string, values: Record<string, string | number>): string {
  const out = join(dir, `${values.CODE}-${file}`);
  writeFileSync(
    out,
    readFileSync(join(FIXTURES, file), "utf8").replace(/@([A-Z_]+)@/g, (_m, k: string) => String(values[k])),
  );
  return out;
}

peerTest(
  "KPIs of a sipp run through Kamailio: 6 answered, 3 busy (486), 2 failed (503 at the UAS, 500 to the caller)",
  [PEERS.kamailio, PEERS.sipp],
  async () => {
    await using dir = tempDir("svc-kpi-sipp-");
    const started = Date.now();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const hepPort = a.app.ingest!.listeners.udp!.port();
    const [sipPort = 0, uasOk = 0, uasBusy = 0, uasFail = 0, uacPort = 0] = await freeUdpPorts(5);

    const uasRefusing = async (code: number, reason: string, port: number, calls: number) => {
      const file = scenario(dir.path, "uas-final.xml", { CODE: code, REASON: reason, RING_MS });
      const p = spawnPeer(
        `sipp-uas-${code}`,
        [
          "sipp",
          "-sf",
          file,
          "-i",
          "127.0.0.1",
          "-p",
          String(port),
          "-mp",
          String(await freeUdpPort()),
          "-m",
          String(calls),
          "-nostdin",
          "-timeout",
          "40s",
        ],
        {
          dir: dir.path,
        },
      );
      await waitUdpListening(p, port);
      return p;
    };
    await using ok = await startSippUas(dir.path, uasOk, ANSWERED);
    await using busy = await uasRefusing(486, "Busy Here", uasBusy, BUSY);
    await using fail = await uasRefusing(503, "Service Unavailable", uasFail, FAILED);
    await using _kamailio = await startKamailio(dir.path, "kpi-proxy.cfg", {
      SIP_PORT: sipPort,
      HEP_PORT: hepPort,
      CAPTURE_ID: 2101,
      UAS_PORT: uasOk,
      UAS_BUSY_PORT: uasBusy,
      UAS_FAIL_PORT: uasFail,
    });

    // One sipp UAC per outcome, one after the other, from the same port.
    const target = `127.0.0.1:${sipPort}`;
    const common = [
      "-i",
      "127.0.0.1",
      "-p",
      String(uacPort),
      "-nostdin",
      "-timeout",
      "40s",
      "-timeout_error",
      "-r",
      "10",
    ];
    const uac = async (name: string, args: string[], calls: number) => {
      const p = spawnPeer(
        name,
        ["sipp", target, ...args, "-mp", String(await freeUdpPort()), "-m", String(calls), ...common],
        { dir: dir.path },
      );
      expect({ name, code: await p.exited(45_000), out: "" }).toEqual({ name, code: 0, out: "" });
    };
    await uac("sipp-uac-ok", ["-sn", "uac", "-s", "ok", "-d", String(HOLD_MS)], ANSWERED);
    await uac("sipp-uac-busy", ["-sf", scenario(dir.path, "uac-refused.xml", { CODE: 486 }), "-s", "busy"], BUSY);
    // RFC 3261 §16.7 step 6: a proxy does not forward a 503; Kamailio sends the caller a 500 instead.
    await uac("sipp-uac-fail", ["-sf", scenario(dir.path, "uac-refused.xml", { CODE: 500 }), "-s", "fail"], FAILED);
    for (const p of [ok, busy, fail])
      expect({ uas: p.name, code: await p.exited(10_000) }).toEqual({ uas: p.name, code: 0 });

    // Every call's last message (the 200 to BYE, or Kamailio's ACK to the refusing UAS) stored.
    const lake = a.app.lake!;
    const calls = ANSWERED + BUSY + FAILED;
    await waitFor(
      "every call's final messages stored",
      async () => {
        await lake.sync();
        const r = await lake.query(
          "SELECT count(DISTINCT session_id) FILTER (WHERE cseq_method = 'BYE' AND response_code = 200) AS byes, count(DISTINCT session_id) FILTER (WHERE method = 'ACK') AS acks FROM svc_lake.main.hep_proto_1_call",
        );
        return Number(r.rows[0]!.byes) === ANSWERED && Number(r.rows[0]!.acks) === calls;
      },
      20_000,
    );
    const to = Date.now();

    // By hand from the stored messages: per call its first INVITE, first 18x, first 200 to INVITE, first BYE.
    const rows = (
      await lake.query(
        "SELECT session_id AS id, epoch_us(timestamp) AS us, method, response_code AS rc, cseq_method AS cm FROM svc_lake.main.hep_proto_1_call",
      )
    ).rows;
    const perCall = new Map<string, { t0: number; ring?: number; answer?: number; bye?: number; dest: string }>();
    const first = (a: number | undefined, b: number) => (a === undefined ? b : Math.min(a, b));
    for (const r of rows) {
      const c = perCall.get(String(r.id)) ?? { t0: Infinity, dest: "" };
      const us = Number(r.us);
      if (r.method === "INVITE") c.t0 = Math.min(c.t0, us);
      if (r.cm === "INVITE" && Number(r.rc) >= 180 && Number(r.rc) < 200) c.ring = first(c.ring, us);
      if (r.cm === "INVITE" && Number(r.rc) === 200) c.answer = first(c.answer, us);
      if (r.method === "BYE") c.bye = first(c.bye, us);
      perCall.set(String(r.id), c);
    }
    expect(perCall.size).toBe(calls);
    const all = [...perCall.values()];
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const pdd = mean(all.map((c) => (Math.min(c.ring ?? Infinity, c.answer ?? Infinity) - c.t0) / 1000));
    const acd = mean(
      all.filter((c) => c.answer !== undefined && c.bye !== undefined).map((c) => (c.bye! - c.answer!) / 1e6),
    );

    const api = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    const get = async (path: string) =>
      (
        (await (await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          data: Record<string, any>;
        }
      ).data;
    const k = await get(`/statistics/kpi?from=${started - 60_000}&to=${to}&node=2101`);
    const t = k.totals;
    expect({
      attempts: t.attempts,
      answered: t.outcomes.answered,
      busy: t.outcomes.busy,
      failed: t.outcomes.failed,
      pending: t.outcomes.pending,
    }).toEqual({
      attempts: calls,
      answered: ANSWERED,
      busy: BUSY,
      failed: FAILED,
      pending: 0,
    });
    expect(t.asr).toBeCloseTo(ANSWERED / calls, 9);
    expect(t.ner).toBeCloseTo((ANSWERED + BUSY) / calls, 9);
    // The final response of a call is the last one seen (docs/KPIS.md): the 500 to the caller, after the UAS's 503.
    expect(k.response_codes).toEqual([
      { code: 200, calls: ANSWERED },
      { code: 486, calls: BUSY },
      { code: 500, calls: FAILED },
    ]);
    expect(t.acd_s).toBeCloseTo(acd, 6);
    expect(t.pdd_ms).toBeCloseTo(pdd, 3);
    // The scenario's pauses bound the figures from below: every answered call was held HOLD_MS,
    // every refused call rang only after RING_MS.
    expect(t.acd_s).toBeGreaterThanOrEqual(HOLD_MS / 1000);
    expect(pdd * calls).toBeGreaterThanOrEqual(RING_MS * (BUSY + FAILED));

    const d = await get(`/statistics/kpi/destinations?from=${started - 60_000}&to=${to}`);
    expect(
      d.items.map((x: { destination: string; failures: number; top_code: number }) => [
        x.destination,
        x.failures,
        x.top_code,
      ]),
    ).toEqual([["fail", FAILED, 500]]);
  },
  120_000,
);
