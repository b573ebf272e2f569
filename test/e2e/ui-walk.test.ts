/**
 * An acceptance walk through the dashboard (docs/DASHBOARD.md), as a VoIP engineer does it in Chromium (playwright-core, the
 * appliance in-process): 300 calls over the last two days sent as HEP over UDP in four batches whose
 * times interleave, the lake flushed after three of them (several Parquet files plus rows still in
 * the buffer). Then, through roles and accessible names only:
 *  - "Last 24 hours" shows the true newest rows first: the grid equals the newest messages of the
 *    window made here from the send times, and what a `full`-strategy SearchService (one ordered
 *    scan) answers for the request the page sent;
 *  - the grid says the limit was hit ("first 200 of N messages", N counted here) and Load more
 *    appends the next 200 in the same order;
 *  - a call between two phones on one IP (ports 5062 and 5064) has one ladder column per port,
 *    every column label whole; the call window closes with Esc;
 *  - every popover of the dashboard closes with Esc, focus back on its button;
 *  - a saved search survives a reload;
 *  - the Events over time chart counts the window's messages (equal to the grid's N).
 * With SVC_UPDATE_SCREENSHOTS=1 the results screen goes to docs/screenshots/walk-last-24h.png.
 */
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { SearchService } from "../../src/api/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { createSettingsModule } from "../../src/settings/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-walk-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const CALLS = 300;
const SLOT_MS = 576_000; // 300 slots of 9.6 min: two days
const PROXY = "10.50.0.1";
const PHONES = "10.50.0.7"; // the same-IP call: two phones on one host
const MULTI_SLOT = 3;
const RUN = crypto.randomUUID().slice(0, 6);
const LIMIT = 200;

interface Sent {
  packet: Uint8Array;
  ms: number;
  callId: string;
  caller: string;
  batch: number;
}

/** One call per slot, newest first by slot; every message on its own millisecond (no ties). */
function walkCalls(nowMs: number): Sent[] {
  const out: Sent[] = [];
  for (let slot = 0; slot < CALLS; slot++) {
    const t0 = nowMs - 90_000 - slot * SLOT_MS - ((slot * 7919) % 400) * 1000 - (slot % 997);
    const callId = `walk-${RUN}-${String(slot).padStart(3, "0")}@pbx`;
    const caller = `1${String(slot % 20).padStart(3, "0")}`;
    const batch = (slot * 7) % 4; // batch 3 stays in the buffer
    const p = { callId, from: caller, to: "2000", fromTag: `f${slot}`, toTag: `t${slot}` };
    const add = (payload: string, atMs: number, src: [string, number], dst: [string, number]) =>
      out.push({
        packet: encodeHep3({
          srcIp: src[0],
          srcPort: src[1],
          dstIp: dst[0],
          dstPort: dst[1],
          timestampUs: (t0 + atMs) * 1000,
          protoType: 1,
          captureId: 2001,
          nodeName: "edge-walk",
          payload,
        }),
        ms: t0 + atMs,
        callId,
        caller,
        batch: slot === MULTI_SLOT ? 3 : batch,
      });
    if (slot === MULTI_SLOT) {
      // Phone A (5062) calls phone B (5064) on the same host through the proxy.
      const A: [string, number] = [PHONES, 5062];
      const B: [string, number] = [PHONES, 5064];
      const P: [string, number] = [PROXY, 5060];
      const inv = invite({ ...p, srcIp: PHONES });
      const ok = response(200, "OK", "INVITE", p);
      const ringing = response(180, "Ringing", "INVITE", p);
      const ack = request("ACK", { ...p, cseq: 1 });
      const bye = request("BYE", p);
      const byeOk = response(200, "OK", "BYE", p);
      const flow: Array<[string, number, [string, number], [string, number]]> = [
        [inv, 0, A, P],
        [response(100, "Trying", "INVITE", p), 10, P, A],
        [inv, 20, P, B],
        [ringing, 300, B, P],
        [ringing, 310, P, A],
        [ok, 2_000, B, P],
        [ok, 2_010, P, A],
        [ack, 2_030, A, P],
        [ack, 2_040, P, B],
        [bye, 8_000, A, P],
        [bye, 8_010, P, B],
        [byeOk, 8_030, B, P],
        [byeOk, 8_040, P, A],
      ];
      for (const [payload, at, src, dst] of flow) add(payload, at, src, dst);
      continue;
    }
    const phone: [string, number] = [`10.50.1.${slot % 200}`, 5060];
    const proxy: [string, number] = [PROXY, 5060];
    add(invite({ ...p, srcIp: phone[0] }), 0, phone, proxy);
    add(response(100, "Trying", "INVITE", p), 15, proxy, phone);
    if (slot % 3 === 1) {
      add(response(486, "Busy Here", "INVITE", p), 900, proxy, phone);
      add(request("ACK", { ...p, cseq: 1 }), 920, phone, proxy);
    } else {
      add(response(180, "Ringing", "INVITE", p), 400, proxy, phone);
      add(response(200, "OK", "INVITE", p), 3_000, proxy, phone);
      add(request("ACK", { ...p, cseq: 1 }), 3_020, phone, proxy);
      add(request("BYE", p), 9_000, phone, proxy);
      add(response(200, "OK", "BYE", p), 9_030, proxy, phone);
    }
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 23);
/** "1 234" as the grid writes counts (no-break spaces) made comparable. */
const plain = (s: string) => s.replace(/[\u00a0\u202f]/g, " ");
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, " ");

/** Rows of the results grid as "Call-ID | Date" (the page shows UTC: the browser runs in UTC). */
async function gridRows(page: Page): Promise<string[]> {
  const table = page.getByRole("table", { name: "Search results" });
  const heads = await table.getByRole("columnheader").allInnerTexts();
  const dateAt = heads.findIndex((h) => h.replace(/ [▲▼]$/, "").trim() === "Date");
  const cells = await table
    .getByRole("row", { name: /^Open call/ })
    .evaluateAll(
      (rows, i) =>
        rows.map(
          (r) =>
            `${(r.getAttribute("aria-label") ?? "").replace(/^Open call /, "")} | ${(r as HTMLTableRowElement).cells[i as number]?.textContent ?? ""}`,
        ),
      dateAt,
    );
  return cells;
}

peerTest(
  "walk: newest rows of 'Last 24 hours' exact over files and buffer, limit said and Load more, same-IP ports as columns, popovers close on Esc, saved search after reload, chart total",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-walk-");
    const shots =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      storage: { lakehouse: { flush_interval_sec: 3600 } }, // the test flushes between batches
    });
    const { ingest, lake, coordinatorUrl, config } = a.app;
    const sent = walkCalls(Date.now());
    const udp = await Bun.udpSocket({});
    let stored = 0;
    for (let batch = 0; batch < 4; batch++) {
      const mine = sent.filter((m) => m.batch === batch);
      for (const m of mine) udp.send(m.packet, ingest!.listeners.udp!.port(), "127.0.0.1");
      stored += mine.length;
      await waitFor(`batch ${batch} stored`, async () => {
        await lake!.sync();
        return (
          Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) === stored
        );
      });
      if (batch < 3) await lake!.flush();
    }
    udp.close();
    expect((await lake!.files("main.hep_proto_1_call")).length).toBeGreaterThanOrEqual(3);
    expect(Number((await lake!.query("SELECT count(*) AS n FROM svc_lake.main.mem_hep_proto_1_call")).rows[0]!.n)).toBe(
      sent.filter((m) => m.batch === 3).length,
    );
    // The reference: one ordered scan over the same lake.
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

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (
        await browser.newContext({ viewport: { width: 1366, height: 900 }, timezoneId: "UTC" })
      ).newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();

      // 1. "Last 24 hours", no filter: the newest 200 messages of the window, newest first.
      const rangeButton = page.getByRole("button", { name: /^Dashboard time range:/ });
      await rangeButton.click();
      await page
        .getByRole("dialog", { name: "Dashboard time range" })
        .getByRole("button", { name: "Last 24 hours" })
        .click();
      await page.getByRole("button", { name: /^Dashboard time range: Last 24 hours/ }).waitFor();
      const form = page.getByRole("form", { name: "Search call" });
      const asked = page.waitForRequest((r) => r.url().endsWith("/transactions/search"));
      await form.getByRole("button", { name: "Search" }).click();
      const body = JSON.parse((await asked).postData() ?? "{}") as {
        param: { limit: number };
        timestamp: { from: number; to: number };
      };
      expect([body.param.limit, body.timestamp.to - body.timestamp.from]).toEqual([LIMIT, 24 * 3_600_000]);
      const inWindow = sent
        .filter((m) => m.ms >= body.timestamp.from && m.ms <= body.timestamp.to)
        .sort((x, y) => y.ms - x.ms);
      expect(inWindow.length).toBeGreaterThan(2 * LIMIT);
      const want = inWindow.map((m) => `${m.callId} | ${iso(m.ms)}`);
      const status = page.getByRole("status").filter({ hasText: / messages?( ·|$)/ });
      // 2. The limit is said: "first 200 of N messages", N counted here.
      await status
        .filter({ hasText: new RegExp(`^first 200 of ${grouped(inWindow.length).replace(/ /g, "\\s")} messages`) })
        .waitFor();
      await page.getByLabel("Rows").selectOption("200");
      expect(await gridRows(page)).toEqual(want.slice(0, LIMIT));
      const reference = await full.run({
        protoType: 1,
        eventType: "call",
        filter: {},
        fromMs: body.timestamp.from,
        toMs: body.timestamp.to,
        limit: LIMIT,
      });
      expect(reference.items.map((i) => `${String(i.session_id)} | ${iso(Number(i.timestamp_us) / 1000)}`)).toEqual(
        want.slice(0, LIMIT),
      );
      await page.screenshot({ path: join(shots, "walk-last-24h.png") });

      // Load more: the next 200 in the same order (the grid turns to its second page).
      await page.getByRole("button", { name: "Load more" }).click();
      await status.filter({ hasText: /^first 400 of / }).waitFor();
      await page.getByRole("navigation", { name: "Result pages" }).getByText("2 / 2").waitFor();
      expect(await gridRows(page)).toEqual(want.slice(LIMIT, 2 * LIMIT));

      // 3. The same-IP call: one column per port, every label whole; Esc closes the window.
      const multi = sent.find((m) => m.callId.endsWith(`-${String(MULTI_SLOT).padStart(3, "0")}@pbx`))!.callId;
      await form.getByLabel("Call-ID").fill(multi);
      await form.getByRole("button", { name: "Search" }).click();
      await status.filter({ hasText: /^13 messages/ }).waitFor();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: `Open call ${multi}` })
        .first()
        .click();
      const call = page.getByRole("dialog", { name: `Call ${multi}` });
      await call.getByText("13 messages").waitFor();
      const columns = await call
        .getByRole("list", { name: "Endpoints" })
        .getByRole("listitem")
        .evaluateAll((els) =>
          els.map((e) => ({
            name: e.getAttribute("aria-label"),
            whole: e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight,
          })),
        );
      expect(columns).toEqual(
        [`${PHONES}:5062`, `${PROXY}:5060`, `${PHONES}:5064`].map((name) => ({ name, whole: true })),
      );
      expect(
        await call
          .getByRole("group", { name: /^Call flow/ })
          .getByRole("button")
          .count(),
      ).toBe(13);
      await page.keyboard.press("Escape");
      await call.waitFor({ state: "detached" });
      await form.getByLabel("Call-ID").fill("");

      // 4. Every popover closes with Esc, focus back on its button.
      const results = page.getByRole("region", { name: "Results" });
      const popovers: Array<[Locator, Locator]> = [
        [rangeButton, page.getByRole("dialog", { name: "Dashboard time range" })],
        [form.getByRole("button", { name: "Fields…" }), page.getByRole("dialog", { name: "Fields shown in the form" })],
        [
          form.getByRole("button", { name: "Choose Method values" }),
          page.getByRole("dialog", { name: "Method values" }),
        ],
        [form.getByRole("button", { name: "Saved filters" }), page.getByRole("dialog", { name: "Saved filters" })],
        [
          page.getByRole("button", { name: "Call search widget menu" }),
          page.getByRole("menu", { name: "Call search widget menu" }),
        ],
        [results.getByRole("button", { name: "Columns…" }), page.getByRole("dialog", { name: "Columns shown" })],
      ];
      for (const [trigger, panel] of popovers) await escCloses(page, trigger, panel);
      await page.setViewportSize({ width: 400, height: 800 });
      await escCloses(
        page,
        page.getByRole("navigation", { name: "Main" }).getByRole("button", { name: /^Menu/ }),
        page.getByRole("menu", { name: "Pages" }),
      );
      await page.setViewportSize({ width: 1366, height: 900 });

      // 5. A saved search survives a reload: saved, page reloaded, loaded, the same rows again.
      const caller = "1007";
      const fromCaller = inWindow.filter((m) => m.caller === caller).map((m) => `${m.callId} | ${iso(m.ms)}`);
      expect(fromCaller.length).toBeGreaterThan(0);
      await form.getByLabel("From User").fill(caller);
      await form.getByRole("button", { name: "Search" }).click();
      await status.filter({ hasText: new RegExp(`^${fromCaller.length} messages`) }).waitFor();
      expect(await gridRows(page)).toEqual(fromCaller);
      await form.getByRole("button", { name: "Save filters…" }).click();
      const save = page.getByRole("dialog", { name: "Save filters" });
      await save.getByLabel("Name").fill(`Calls of ${caller}`);
      await save.getByRole("button", { name: "Save" }).click();
      await save.waitFor({ state: "detached" });
      await page.reload();
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      expect(await form.getByLabel("From User").inputValue()).toBe("");
      await form.getByRole("button", { name: "Saved filters" }).click();
      await page
        .getByRole("dialog", { name: "Saved filters" })
        .getByRole("button", { name: `Load Calls of ${caller}` })
        .click();
      expect(await form.getByLabel("From User").inputValue()).toBe(caller);
      await status.filter({ hasText: new RegExp(`^${fromCaller.length} messages`) }).waitFor();
      await page.getByLabel("Rows").selectOption("200");
      expect(await gridRows(page)).toEqual(fromCaller);

      // 6. Events over time (Smart Search): the chart's total is the window's count, as the grid's N.
      await page.getByRole("tab", { name: "Smart Search" }).click();
      const smart = page.getByRole("form", { name: "Search call" });
      const histAsked = page.waitForRequest((r) => r.url().endsWith("/transactions/histogram"));
      await smart.getByRole("button", { name: "Search" }).click();
      const hist = JSON.parse((await histAsked).postData() ?? "{}") as { timestamp: { from: number; to: number } };
      const histCount = sent.filter((m) => m.ms >= hist.timestamp.from && m.ms <= hist.timestamp.to).length;
      const chart = page.getByRole("region", { name: "Events over time" }).getByRole("img", { name: / events in / });
      await chart.waitFor();
      const chartTotal = Number(
        /^([\d,]+) events in /.exec((await chart.getAttribute("aria-label")) ?? "")?.[1]?.replace(/,/g, ""),
      );
      expect(chartTotal).toBe(histCount);
      const gridTotal = Number(
        plain((await status.filter({ hasText: /^first 200 of / }).textContent()) ?? "")
          .match(/^first 200 of ([\d ]+) messages/)?.[1]
          ?.replace(/ /g, ""),
      );
      expect(gridTotal).toBe(chartTotal);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await settings.module.stop();
    }
  },
  180_000,
);

/** Opens a popover with its button, Esc closes it, focus is back on the button. */
async function escCloses(page: Page, trigger: Locator, panel: Locator) {
  await trigger.click();
  await panel.waitFor();
  await page.keyboard.press("Escape");
  await panel.waitFor({ state: "detached" });
  expect({
    panel: String(panel),
    focused: await trigger.evaluate((el) => el === document.activeElement),
    expanded: await trigger.getAttribute("aria-expanded"),
  }).toEqual({
    panel: String(panel),
    focused: true,
    expanded: "false",
  });
}
