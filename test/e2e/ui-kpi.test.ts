/**
 * The call KPI widgets in a real browser (docs/KPIS.md "Dashboard widgets"): calls with declared
 * outcomes in the last hour, sent as HEP over UDP. Both widgets are added through the widget
 * picker; the chart's accessible summary and each step's tooltip, and the table's cells, must
 * equal figures computed here from the declarations. Node filter, empty, error and Esc are checked
 * through roles and names only.
 */
import { expect } from "bun:test";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { callMessages, rtcpReport, type KpiCall, type Outcome } from "../fixtures/kpi-calls.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";

const PASSWORD = "ui-kpi-password";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const MIN = 60_000;
const NOW = Date.now();
const ROOT = resolve(import.meta.dir, "../..");

const call = (
  id: string,
  agoMin: number,
  to: string,
  outcome: Outcome,
  code: number | null,
  t: Partial<KpiCall> = {},
): KpiCall => ({
  callId: `${id}@ui-kpi.test`,
  to,
  t0: NOW - agoMin * MIN,
  node: 7,
  outcome,
  code,
  ...t,
});
const CALLS: KpiCall[] = [
  call("a1", 50, "1001", "answered", 200, { ringMs: 300, answerMs: 2_000, byeMs: 62_000 }),
  call("a2", 41, "1002", "answered", 200, { ringMs: 500, answerMs: 3_000, byeMs: 33_000 }),
  call("a3", 33, "1003", "answered", 200, { answerMs: 900, byeMs: 10_900 }),
  call("b1", 40, "1004", "busy", 486, { ringMs: 300 }),
  call("c1", 30, "1005", "cancelled", 487, { ringMs: 400 }),
  call("f1", 25, "5555", "failed", 503),
  call("f2", 20, "5555", "failed", 503),
  call("f3", 15, "6666", "failed", 404),
  call("m1", 12, "1006", "answered", 200, { node: 8, ringMs: 100, answerMs: 1_000, byeMs: 11_000 }),
];
const NER_SET: Outcome[] = ["answered", "busy", "no_answer", "rejected", "cancelled"];

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
const pad = (n: number) => String(n).padStart(2, "0");
const localTime = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

peerTest(
  "call KPI widgets: chart and table show the KPIs computed by hand, per node, with empty and error states",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-kpi-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const packets = [
      ...CALLS.flatMap((c) => callMessages(c)),
      rtcpReport(NOW - 41 * MIN + 10_000, 7, 160, 0, "a2@ui-kpi.test"),
    ];
    const udp = await Bun.udpSocket({});
    for (const m of packets) udp.send(m.packet, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("every message stored", async () => {
      await lake!.sync();
      const n = async (t: string) =>
        Number((await lake!.query(`SELECT count(*) AS n FROM svc_lake.main.${t}`)).rows[0]!.n);
      return (await n("hep_proto_1_call")) + (await n("hep_proto_5_default")) === packets.length;
    });
    const answered = CALLS.filter((c) => c.outcome === "answered").length;
    const asr = answered / CALLS.length;
    const ner = CALLS.filter((c) => NER_SET.includes(c.outcome)).length / CALLS.length;
    const durations = CALLS.filter((c) => c.byeMs !== undefined).map((c) => (c.byeMs! - c.answerMs!) / 1000);
    const acd = durations.reduce((s, x) => s + x, 0) / durations.length;

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
      const consoleErrors: string[] = [];
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tab", { name: "Home" }).click();

      // The picker lists the chart; added, it shows the ASR of "Last hour" (the default range).
      const asked = page.waitForRequest((r) => r.url().includes("/statistics/kpi?"));
      await page.getByLabel("Add widget").selectOption({ label: "Call KPIs over time" });
      const q = new URL((await asked).url()).searchParams;
      expect(Number(q.get("to")) - Number(q.get("from"))).toBe(60 * MIN);
      const chartRegion = page.getByRole("region", { name: "Call KPIs over time" });
      await chartRegion.getByRole("img", { name: new RegExp(`^ASR ${pct(asr)} in .+ \\(1 min steps\\)$`) }).waitFor();

      // Call attempts: the tooltip of every step equals the calls counted here per minute.
      await chartRegion
        .getByRole("combobox", { name: "KPI shown by Call KPIs over time" })
        .selectOption({ label: "Call attempts" });
      const chart = chartRegion.getByRole("img", { name: new RegExp(`^Call attempts ${CALLS.length} in `) });
      await chart.waitFor();
      const from = Number(q.get("from"));
      const to = Number(q.get("to"));
      const origin = Math.floor(from / MIN) * MIN;
      const steps = Math.ceil((to - origin) / MIN);
      const want = Array.from(
        { length: steps },
        (_x, i) => CALLS.filter((c) => Math.min(steps - 1, Math.floor((c.t0 - origin) / MIN)) === i).length,
      );
      await chart.focus();
      await page.keyboard.press("Home");
      const tip = chartRegion.getByRole("tooltip");
      const seen: number[] = [];
      for (let i = 0; i < steps; i++) {
        if (i > 0) await page.keyboard.press("ArrowRight");
        const text = await waitFor(`the tooltip of step ${i}`, async () => {
          const t = await tip.innerText();
          return t.startsWith(localTime(origin + i * MIN)) ? t : undefined;
        });
        seen.push(Number(/^Call attempts (\d+)$/m.exec(text)![1]));
      }
      expect(seen).toEqual(want);
      await page.keyboard.press("Escape");
      await tip.waitFor({ state: "hidden" });

      // ACD, then node 8 only.
      await chartRegion
        .getByRole("combobox", { name: "KPI shown by Call KPIs over time" })
        .selectOption({ label: "ACD" });
      await chartRegion.getByRole("img", { name: new RegExp(`^ACD ${acd.toFixed(1)} s in `) }).waitFor();
      await chartRegion.getByLabel("Capture node of Call KPIs over time").fill("8");
      await chartRegion.getByLabel("Capture node of Call KPIs over time").press("Enter");
      const m1 = CALLS.find((c) => c.node === 8)!;
      await chartRegion
        .getByRole("img", { name: new RegExp(`^ACD ${((m1.byeMs! - m1.answerMs!) / 1000).toFixed(1)} s in `) })
        .waitFor();
      // A node without calls: said in words.
      await chartRegion.getByLabel("Capture node of Call KPIs over time").fill("999");
      await chartRegion.getByLabel("Capture node of Call KPIs over time").press("Enter");
      await chartRegion.getByText(/^No ACD in .+: no calls\.$/).waitFor();

      // The table: KPIs of the range, response codes, failing destinations.
      await page.getByLabel("Add widget").selectOption({ label: "Call KPI table" });
      const tableRegion = page.getByRole("region", { name: "Call KPI table" });
      const kpis = tableRegion.getByRole("table", { name: "Call KPIs" });
      const cell = (table: typeof kpis, row: string) =>
        table
          .getByRole("row", { name: new RegExp(`^${row.replace(/[()]/g, "\\$&")} `) })
          .getByRole("cell")
          .first();
      await waitFor("the ASR cell", async () =>
        (await cell(kpis, "ASR").innerText()) === pct(asr) ? true : undefined,
      );
      expect(await cell(kpis, "NER").innerText()).toBe(pct(ner));
      expect(await cell(kpis, "Call attempts").innerText()).toBe(String(CALLS.length));
      expect(await cell(kpis, "ACD").innerText()).toBe(`${acd.toFixed(1)} s`);
      expect(await cell(kpis, "Jitter (mean / max)").innerText()).toBe("20.0 ms / 20.0 ms");
      // With SVC_UPDATE_SCREENSHOTS=1 the widgets go to docs/screenshots/ (as ui-histogram.test.ts does).
      await chartRegion.getByLabel("Capture node of Call KPIs over time").fill("");
      await chartRegion.getByLabel("Capture node of Call KPIs over time").press("Enter");
      await chartRegion
        .getByRole("combobox", { name: "KPI shown by Call KPIs over time" })
        .selectOption({ label: "ASR" });
      await chartRegion.getByRole("img", { name: new RegExp(`^ASR ${pct(asr)} in `) }).waitFor();
      const shots = process.env.SVC_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : dir.path;
      await chartRegion.screenshot({ path: join(shots, "kpi-chart.png") });
      await tableRegion.screenshot({ path: join(shots, "kpi-table.png") });
      expect(statSync(join(shots, "kpi-table.png")).size).toBeGreaterThan(5_000);
      await tableRegion
        .getByRole("combobox", { name: "View of Call KPI table" })
        .selectOption({ label: "Response codes" });
      const codes = tableRegion.getByRole("table", { name: "Response codes" });
      await codes.waitFor();
      const byCode = new Map<number, number>();
      for (const c of CALLS) byCode.set(c.code!, (byCode.get(c.code!) ?? 0) + 1);
      const rows = await codes.getByRole("row").allInnerTexts();
      expect(rows.slice(1).map((r) => r.split(/\t/).map((x) => x.trim()))).toEqual(
        [...byCode].sort(([x], [y]) => x - y).map(([code, n]) => [String(code), String(n), pct(n / CALLS.length)]),
      );
      await tableRegion
        .getByRole("combobox", { name: "View of Call KPI table" })
        .selectOption({ label: "Failing destinations" });
      const dests = tableRegion.getByRole("table", { name: "Failing destinations" });
      await dests.waitFor();
      const destRows = (await dests.getByRole("row").allInnerTexts())
        .slice(1)
        .map((r) => r.split(/\t/).map((x) => x.trim()));
      const fails = (to: string) => CALLS.filter((c) => c.to === to && c.outcome === "failed");
      expect(destRows).toEqual([
        ["5555", String(fails("5555").length), String(fails("5555").length), "100.0 %", "503"],
        ["6666", String(fails("6666").length), String(fails("6666").length), "100.0 %", "404"],
      ]);

      // A failed request: an alert, not stale figures.
      await page.route(/\/statistics\/kpi\?/, (r) => r.abort());
      await tableRegion.getByRole("combobox", { name: "View of Call KPI table" }).selectOption({ label: "KPIs" });
      await tableRegion
        .getByRole("alert")
        .filter({ hasText: /^KPIs could not be computed: / })
        .waitFor();
      expect(await tableRegion.getByRole("table").count()).toBe(0);
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
