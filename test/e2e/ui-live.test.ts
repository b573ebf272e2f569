/**
 * The results widget's Live mode in a real browser (docs/STREAM.md "In the dashboard"): Chromium driven by
 * playwright-core against the appliance in-process. New SIP messages sent as HEP over UDP appear
 * as rows (newest first), Pause holds them back and counts them, Resume shows them, a row opens
 * its call, a restart of the server shows the gap row after the reconnect and new messages follow,
 * Live again returns to the search results; with the stream off the widget says so.
 * Roles and accessible names only.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { captureOn, hep, udpSender } from "../integration/stream-helpers.ts";
import { CHROMIUM_ARGS, restartOnSamePort, signIn } from "./ui-live-harness.ts";

const PASSWORD = "ui-live-password-1";

peerTest(
  "results widget: Live shows new SIP messages as they arrive, pauses and resumes, opens a call; off when the stream is disabled",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-live-");
    const overrides = {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, hep_stream: { enable: true } },
    };
    let a: TestAppliance = await startTestAppliance(`${dir.path}/on`, overrides);
    let udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    const login = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    // Capture on in the ingest thread before the browser subscribes (it switches on per hand-over).
    using sentinel = await captureOn(
      `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?access_token=${token}`,
      udp.send,
    );

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await signIn(page, a, PASSWORD);
      // From here on (the login page's session probe answers 401 by design) until the restart: no
      // failed request; no script error at all.
      const consoleErrors: string[] = [];
      const scriptErrors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text());
      });
      page.on("pageerror", (e) => scriptErrors.push(String(e)));

      await page.getByRole("button", { name: "Live", pressed: false }).click();
      const status = page.getByRole("status").filter({ hasText: /^Live · / });
      await status.waitFor();
      await page.getByText("Waiting for new SIP messages…").waitFor();

      const call = { callId: `ui-live-${crypto.randomUUID()}@pbx`, from: "1001", to: "2002", toTag: "t-1" };
      const t0 = Date.now();
      udp.send([
        hep({
          srcIp: "10.20.0.11",
          dstIp: "10.20.0.1",
          srcPort: 5060,
          dstPort: 5070,
          tsUs: t0 * 1000,
          payload: invite(call),
        }),
      ]);
      const table = page.getByRole("table", { name: "Live messages" });
      const rows = table.getByRole("row", { name: `Open call ${call.callId}` });
      await rows.first().waitFor();
      const cells = await rows.first().getByRole("cell").allInnerTexts();
      expect(cells.slice(1)).toEqual(["INVITE", "1001", "2002", "10.20.0.11:5060", "10.20.0.1:5070", call.callId]);
      await page.getByRole("status").filter({ hasText: "Live · 1 message" }).waitFor();

      // Pause: new messages are held back and counted, the table stays as it was.
      await page.getByRole("button", { name: "Pause" }).click();
      await page.getByRole("button", { name: "Resume", pressed: true }).waitFor();
      udp.send([
        hep({
          srcIp: "10.20.0.1",
          dstIp: "10.20.0.11",
          srcPort: 5070,
          dstPort: 5060,
          tsUs: t0 * 1000 + 30_000,
          payload: response(180, "Ringing", "INVITE", call),
        }),
      ]);
      await page.getByRole("status").filter({ hasText: "Paused · 1 new" }).waitFor();
      expect(await rows.count()).toBe(1);
      await page.getByRole("button", { name: "Resume" }).click();
      await page.getByRole("status").filter({ hasText: "Live · 2 messages" }).waitFor();
      // Newest first.
      expect((await rows.nth(0).getByRole("cell").allInnerTexts())[1]).toBe("180 Ringing");
      expect((await rows.nth(1).getByRole("cell").allInnerTexts())[1]).toBe("INVITE");

      // A row opens its call (the transaction window), Esc closes it.
      await rows.nth(1).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText("2 messages").waitFor();
      // Its last request answered before the restart below.
      await dialog
        .getByRole("status", { name: "RTCP, media and log events" })
        .getByText("none for this call")
        .waitFor();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      expect(consoleErrors).toEqual([]);
      expect(sentinel.frames.length).toBeGreaterThan(0);

      // The server restarts (its stream clients are closed with 1001): the widget reconnects by
      // itself and shows the gap as a row; messages after it come in above it (newest first).
      udp.close();
      a = await restartOnSamePort(a, `${dir.path}/on`, overrides);
      udp = await udpSender(a.app.ingest!.listeners.udp!.port());
      const gap = table.getByRole("note").filter({
        hasText:
          /^Connection lost from [\d-]+ [\d:.]+ to [\d-]+ [\d:.]+: messages in between are not shown here \(search for them\)\.$/,
      });
      await gap.waitFor({ timeout: 40_000 });
      await page.getByRole("status").filter({ hasText: "Live · 2 messages" }).waitFor();
      const after = { ...call, callId: `ui-live-after-${crypto.randomUUID()}@pbx` };
      udp.send([
        hep({ srcIp: "10.20.0.12", dstIp: "10.20.0.1", srcPort: 5060, dstPort: 5070, payload: invite(after) }),
      ]);
      await table.getByRole("row", { name: `Open call ${after.callId}` }).waitFor();
      await page.getByRole("status").filter({ hasText: "Live · 3 messages" }).waitFor();
      const order = await table
        .locator("tbody")
        .getByRole("row")
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("aria-label") ?? (tr.textContent ?? "").slice(0, 15)));
      expect(order).toEqual([
        `Open call ${after.callId}`,
        "Connection lost",
        `Open call ${call.callId}`,
        `Open call ${call.callId}`,
      ]);

      // Live again: back to the search results.
      await page.getByRole("button", { name: "Live", pressed: true }).click();
      await page.getByRole("button", { name: "Live", pressed: false }).waitFor();
      expect(await table.count()).toBe(0);
      expect(scriptErrors).toEqual([]);

      // A coordinator with the stream off: the widget says so instead of spinning.
      await using off = await startTestAppliance(`${dir.path}/off`, {
        coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      });
      const other = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await signIn(other, off, PASSWORD);
      await other.getByRole("button", { name: "Live", pressed: false }).click();
      await other
        .getByRole("alert")
        .filter({ hasText: "The live stream is off on this server (coordinator.hep_stream.enable)." })
        .waitFor();
    } finally {
      await browser.close();
      udp.close();
      await a[Symbol.asyncDispose]();
    }
  },
  120_000,
);
