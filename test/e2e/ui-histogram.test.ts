/**
 * The dashboard's "Events over time" chart in a real browser (docs/HISTOGRAM.md "Dashboard"): ~700 SIP messages
 * in the last hour, more than the result grid's 200 rows, sent as HEP over UDP. After a search of
 * "Last hour" the chart's accessible summary names every message of the window, and stepping
 * through the buckets with the keyboard reads each bucket's count from its tooltip, equal to
 * counts made here from the send times for the window the page asked for. Grouping by response
 * class, an empty result, a failed request and Esc are checked through roles and names only.
 */
import { expect } from "bun:test";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { callsOverTime, expectedBuckets } from "../fixtures/calls-over-time.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";

const PASSWORD = "ui-histogram-password";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const MIN = 60_000;
const GRID_LIMIT = 200;
const ROOT = resolve(import.meta.dir, "../..");

const fmt = (n: number) => n.toLocaleString("en-US");
const pad = (n: number) => String(n).padStart(2, "0");
/** Local `YYYY-MM-DD HH:MM:SS`, as the dashboard writes times (the browser runs in this machine's zone). */
const localTime = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

peerTest(
  "time chart: the whole window's count, per bucket and per response class, not the grid's page",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-hist-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    // Calls start 55 to 10 minutes ago; the last BYE is at least 8 minutes old: all inside "Last hour".
    const sent = callsOverTime({ calls: 120, fromMs: Date.now() - 55 * MIN, spanMs: 45 * MIN, seed: 21, tag: "ui" });
    expect(sent.length).toBeGreaterThan(3 * GRID_LIMIT);
    const udp = await Bun.udpSocket({});
    for (const m of sent) udp.send(m.packet, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("every message stored", async () => {
      await lake!.sync();
      return (
        Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
        sent.length
      );
    });

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
      const consoleErrors: string[] = [];
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tab", { name: "Smart Search" }).click();
      const chartRegion = page.getByRole("region", { name: "Events over time" });
      await chartRegion.getByText(/Run a search/).waitFor();

      // "Last hour" (the default range), no filter: the grid holds its limit, the chart every message.
      const asked = page.waitForRequest((r) => r.url().endsWith("/transactions/histogram"));
      await page.getByRole("form", { name: "Search call" }).getByRole("button", { name: "Search" }).click();
      const body = JSON.parse((await asked).postData() ?? "{}") as {
        timestamp: { from: number; to: number };
        group_by: string;
        filter: Record<string, unknown>;
      };
      expect([body.group_by, body.filter.proto_type, body.timestamp.to - body.timestamp.from]).toEqual([
        "method",
        1,
        60 * MIN,
      ]);
      const results = page.getByRole("table", { name: "Search results" });
      await results
        .getByRole("row", { name: /^Open call/ })
        .first()
        .waitFor();
      const chart = chartRegion.getByRole("img", {
        name: new RegExp(`^${fmt(sent.length)} events in .+ \\(30 s buckets\\)$`),
      });
      await chart.waitFor();

      // Keyboard: every bucket's tooltip, left to right, equals the count made here.
      const want = expectedBuckets(sent, body.timestamp.from, body.timestamp.to, 30_000, (m) => m.method);
      expect(want.reduce((n, b) => n + b.count, 0)).toBe(sent.length);
      await chart.focus();
      await page.keyboard.press("Home");
      const tip = chartRegion.getByRole("tooltip");
      const seen: number[] = [];
      for (let i = 0; i < want.length; i++) {
        if (i > 0) await page.keyboard.press("ArrowRight");
        const text = await waitFor(`the tooltip of bucket ${i}`, async () => {
          const t = await tip.innerText();
          return t.startsWith(localTime(want[i]!.start_ms)) ? t : undefined;
        });
        seen.push(Number(/^([\d,]+) events?$/m.exec(text)![1]!.replace(/,/g, "")));
        if (want[i]!.count > 0)
          for (const [k, n] of Object.entries(want[i]!.groups)) expect(text).toContain(`${k} ${fmt(n)}`);
      }
      expect(seen).toEqual(want.map((b) => b.count));
      await page.keyboard.press("Escape");
      await tip.waitFor({ state: "hidden" });

      // The mouse over the plot shows a tooltip; leaving the chart hides it.
      const box = (await chart.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.5);
      await tip.waitFor();
      expect(await tip.innerText()).toMatch(/\d events?/);
      await page.mouse.move(box.x + box.width * 0.6, box.y - 200);
      await tip.waitFor({ state: "hidden" });

      // By response class: the legend names each class with its total over the window.
      await chartRegion.getByRole("combobox", { name: "Group by" }).selectOption({ label: "Response class" });
      const classes = new Map<string, number>();
      for (const m of sent) classes.set(m.statusClass, (classes.get(m.statusClass) ?? 0) + 1);
      const legend = chartRegion.getByRole("list", { name: "Legend" }).getByRole("listitem");
      await legend.filter({ hasText: /^request / }).waitFor();
      const items = (await legend.allInnerTexts()).map((t) => t.trim().split(/\s+/));
      expect(items).toEqual(["request", "1xx", "2xx", "4xx", "5xx"].map((k) => [k, fmt(classes.get(k)!)]));
      await chart.waitFor();
      // With SVC_UPDATE_SCREENSHOTS=1 the chart goes to docs/screenshots/ (as ui-dashboard.test.ts does).
      await chart.focus();
      await page.keyboard.press("End");
      for (let i = 0; i < 20; i++) await page.keyboard.press("ArrowLeft");
      await tip.waitFor();
      const shot = join(
        process.env.SVC_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : dir.path,
        "events-over-time.png",
      );
      await chartRegion.screenshot({ path: shot });
      expect(statSync(shot).size).toBeGreaterThan(5_000);
      await page.keyboard.press("Escape");

      // No match: said in words. A failed request: an alert, not a stale chart.
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill("no-such-call@nowhere");
      await form.getByRole("button", { name: "Search" }).click();
      await chartRegion.getByText(/^No events in .+\.$/).waitFor();
      await page.route("**/transactions/histogram", (r) => r.abort());
      await form.getByLabel("Call-ID").fill("");
      await form.getByRole("button", { name: "Search" }).click();
      await chartRegion
        .getByRole("alert")
        .filter({ hasText: /^Events over time could not be counted: The appliance did not answer/ })
        .waitFor();
      expect(await chartRegion.getByRole("img").count()).toBe(0);
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
