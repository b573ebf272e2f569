/**
 * Cost of the call KPIs (docs/KPIS.md): `--calls` calls (answered, busy, failed; ~8 messages each)
 * spread over the last `--minutes`, sent as HEP over UDP into an in-process appliance and flushed
 * to Parquet; then the wall time of `GET /statistics/kpi` over the whole span and over the last
 * 5 minutes (median of `--runs`), and of the first `/metrics` scrape, which computes the svc_kpi_*
 * series (svc_kpi_refresh_duration_seconds reports the same cost).
 *   bun bench/kpi.ts [--calls 20000] [--minutes 60] [--runs 5]
 */
import { sha256Hex } from "../src/auth/index.ts";
import { startTestAppliance } from "../test/appliance.ts";
import { callsOverTime } from "../test/fixtures/calls-over-time.ts";
import { tempDir, waitFor } from "../test/harness.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const CALLS = Number(args.get("calls") ?? 20_000);
const MINUTES = Number(args.get("minutes") ?? 60);
const RUNS = Number(args.get("runs") ?? 5);
const PASSWORD = "bench-kpi-password";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await using dir = tempDir("svc-bench-kpi-");
await using a = await startTestAppliance(dir.path, {
  coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  storage: { lakehouse: { flush_interval_sec: 3600 } },
});
const now = Date.now();
const sent = callsOverTime({
  calls: CALLS,
  fromMs: now - MINUTES * 60_000,
  spanMs: MINUTES * 60_000 - 120_000,
  seed: 7,
  tag: "bench",
});
const udp = await Bun.udpSocket({});
const port = a.app.ingest!.listeners.udp!.port();
for (let i = 0; i < sent.length; i++) {
  udp.send(sent[i]!.packet, port, "127.0.0.1");
  if (i % 2_000 === 1_999) await Bun.sleep(5); // loopback UDP drops bursts beyond the socket buffer
}
udp.close();
const lake = a.app.lake!;
await waitFor(
  "messages stored",
  async () => {
    await lake.sync();
    return (
      Number((await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) >=
      sent.length * 0.99
    );
  },
  120_000,
);
await lake.flush();

const api = `${a.app.coordinatorUrl}/api/v4`;
const login = await fetch(`${api}/auth/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ username: "admin", password: PASSWORD }),
});
const token = ((await login.json()) as { token: string }).token;
const timed = async (url: string, headers: Record<string, string> = {}) => {
  const t = performance.now();
  const r = await fetch(url, { headers });
  await r.text();
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return performance.now() - t;
};
const auth = { authorization: `Bearer ${token}` };
const whole: number[] = [];
const last5: number[] = [];
const scrape: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const to = Date.now();
  whole.push(await timed(`${api}/statistics/kpi?from=${to - MINUTES * 60_000}&to=${to}`, auth));
  last5.push(await timed(`${api}/statistics/kpi?from=${to - 300_000}&to=${to}`, auth));
}
scrape.push(await timed(`${a.app.coordinatorUrl}/metrics`));
const metrics = await (await fetch(`${a.app.coordinatorUrl}/metrics`)).text();
const cost = Number(/^svc_kpi_refresh_duration_seconds (\S+)$/m.exec(metrics)?.[1]);
console.log(
  JSON.stringify({
    calls: CALLS,
    messages: sent.length,
    minutes: MINUTES,
    kpi_whole_span_ms: Math.round(median(whole)),
    kpi_last_5m_ms: Math.round(median(last5)),
    first_scrape_ms: Math.round(scrape[0]!),
    svc_kpi_refresh_duration_ms: Math.round(cost * 1000),
  }),
);
