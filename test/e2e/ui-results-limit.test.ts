/**
 * A cut answer in a real browser (Debian chromium, playwright-core): when the search limit cuts
 * the answer the results bar says "first 50 of 130 messages" and "Load more" appends the next page
 * in the exact newest-first order without duplicates; a failed page says so and keeps the rows;
 * once every match is loaded the bar says "55 messages" and the button is gone; no match says so.
 * 130 calls (one INVITE each) are ingested as HEP over UDP; the oldest 20 carry 15 KB payloads, so
 * the third page passes coordinator.query.max_result_bytes (200 KB here) and fails with a 413.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";

const PASSWORD = "ui-limit-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const CALLS = 130;
const BIG_FROM = 110; // calls 110..129 (the oldest) carry a 15 KB header
const RUN = crypto.randomUUID().slice(0, 8);
/** Call i: newest first by i, 5 s apart; even calls among the small ones are from 1001. */
const callId = (i: number) => `lim-${RUN}-${String(i).padStart(3, "0")}`;
const caller = (i: number) => (i < BIG_FROM && i % 2 === 0 ? "1001" : "2002");

peerTest(
  "results: 'first 50 of 130 messages', Load more appends the next page in order without duplicates, a failed page and the end say so",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-limit-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, query: { max_result_bytes: 200_000 } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const nowMs = Date.now();
    const udp = await Bun.udpSocket({});
    for (let i = 0; i < CALLS; i++) {
      const payload = invite({
        callId: callId(i),
        from: caller(i),
        to: "3000",
        fromTag: `f${i}`,
        extraHeaders: i >= BIG_FROM ? [`X-Pad: ${"x".repeat(15_000)}`] : [],
      });
      udp.send(
        encodeHep3({
          srcIp: "10.8.0.1",
          dstIp: "10.8.0.2",
          srcPort: 5060,
          dstPort: 5060,
          timestampUs: (nowMs - 60_000 - i * 5_000) * 1000,
          protoType: 1,
          captureId: 3,
          payload,
        }),
        ingest!.listeners.udp!.port(),
        "127.0.0.1",
      );
    }
    udp.close();
    await waitFor("130 calls in the lake", async () => {
      await lake!.sync();
      return (
        Number(
          (
            await lake!.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1", [
              `lim-${RUN}-%`,
            ])
          ).rows[0]!.n,
        ) === CALLS
      );
    });

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();

      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Limit").selectOption("50");
      await form.getByRole("button", { name: "Search" }).click();
      const status = page.getByRole("status").filter({ hasText: / messages?( ·|$)/ });
      await status.filter({ hasText: /^first 50 of 130 messages/ }).waitFor();
      // Every row on one grid page, so the table shows what was loaded.
      await page.getByLabel("Rows").selectOption("200");
      const results = page.getByRole("table", { name: "Search results" });
      const shown = async () =>
        (
          await results
            .getByRole("row", { name: /^Open call/ })
            .evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label") ?? ""))
        ).map((l) => l.replace(/^Open call /, ""));
      const newest = (n: number, keep: (i: number) => boolean = () => true) =>
        Array.from({ length: CALLS }, (_x, i) => i)
          .filter(keep)
          .slice(0, n)
          .map(callId);
      expect(await shown()).toEqual(newest(50));

      // Load more: the next 50, appended in order, no duplicates.
      const more = page.getByRole("button", { name: "Load more" });
      await more.click();
      await status.filter({ hasText: /^first 100 of 130 messages/ }).waitFor();
      expect(await shown()).toEqual(newest(100));

      // The third page holds the 15 KB rows: 413, said in words; the rows and the count stay.
      await more.click();
      const failed = page
        .getByRole("alert")
        .filter({ hasText: /^Loading more failed: .*max_result_bytes|^Loading more failed: / });
      await failed.waitFor();
      expect(await failed.textContent()).toMatch(/^Loading more failed: .+/);
      expect(await status.textContent()).toMatch(/^first 100 of 130 messages/);
      expect(await shown()).toEqual(newest(100));

      // A filtered search: 55 calls from 1001, first 50, then all of them and no button.
      await form.getByLabel("From User").fill("1001");
      await form.getByRole("button", { name: "Search" }).click();
      await status.filter({ hasText: /^first 50 of 55 messages/ }).waitFor();
      expect(
        await page
          .getByRole("alert")
          .filter({ hasText: /^Loading more failed/ })
          .count(),
      ).toBe(0);
      const from1001 = (i: number) => caller(i) === "1001";
      expect(await shown()).toEqual(newest(50, from1001));
      await more.click();
      await status.filter({ hasText: /^55 messages/ }).waitFor();
      expect(await shown()).toEqual(newest(55, from1001));
      expect(await more.count()).toBe(0);

      // No match: the empty state in words, no count of pages.
      await form.getByLabel("From User").fill("9999");
      await form.getByRole("button", { name: "Search" }).click();
      await status.filter({ hasText: /^0 messages/ }).waitFor();
      await page.getByText("No messages match this search in the selected time range").waitFor();
      expect(await more.count()).toBe(0);
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
