/**
 * The search form's filters apply to the results widget's Live mode (docs/STREAM.md "In the
 * dashboard"), in Chromium: a search for From user 1001 and method INVITE, then Live shows only
 * the INVITEs of 1001 as they arrive, and the bar says which filters apply and which cannot.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { captureOn, hep, udpSender } from "../integration/stream-helpers.ts";
import { CHROMIUM_ARGS, signIn } from "./ui-live-harness.ts";

const PASSWORD = "ui-live-filters-password";

peerTest(
  "Live mode keeps the search form's filters: only the matching messages, and the bar names what applies",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-live-filters-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, hep_stream: { enable: true } },
    });
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    const login = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    using _sentinel = await captureOn(
      `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?access_token=${token}`,
      udp.send,
    );
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await signIn(page, a, PASSWORD);
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("From user").fill("1001");
      await form.getByRole("button", { name: "Search" }).click();
      await page.getByRole("button", { name: "Live", pressed: false }).click();
      const note = page.getByRole("note", { name: "Live filters" });
      await note.filter({ hasText: "filtered by from user 1001" }).waitFor();
      await page
        .getByRole("status")
        .filter({ hasText: /^Live · / })
        .waitFor();

      const ours = { callId: `live-f-1001-${crypto.randomUUID()}@pbx`, from: "1001", to: "2002", toTag: "t1" };
      const theirs = { callId: `live-f-3003-${crypto.randomUUID()}@pbx`, from: "3003", to: "2002", toTag: "t2" };
      const t0 = Date.now() * 1000;
      udp.send([
        hep({
          srcIp: "10.30.0.2",
          dstIp: "10.30.0.1",
          srcPort: 5060,
          dstPort: 5060,
          tsUs: t0,
          payload: invite(theirs),
        }),
        hep({
          srcIp: "10.30.0.1",
          dstIp: "10.30.0.2",
          srcPort: 5060,
          dstPort: 5060,
          tsUs: t0 + 1000,
          payload: invite(ours),
        }),
        hep({
          srcIp: "10.30.0.2",
          dstIp: "10.30.0.1",
          srcPort: 5060,
          dstPort: 5060,
          tsUs: t0 + 2000,
          payload: response(180, "Ringing", "INVITE", theirs),
        }),
      ]);
      const table = page.getByRole("table", { name: "Live messages" });
      await table.getByRole("row", { name: `Open call ${ours.callId}` }).waitFor();
      // A marker after the others: once it is shown, the 3003 messages had their chance to appear.
      const marker = { ...ours, callId: `live-f-marker-${crypto.randomUUID()}@pbx` };
      udp.send([
        hep({
          srcIp: "10.30.0.1",
          dstIp: "10.30.0.2",
          srcPort: 5060,
          dstPort: 5060,
          tsUs: t0 + 3000,
          payload: invite(marker),
        }),
      ]);
      await table.getByRole("row", { name: `Open call ${marker.callId}` }).waitFor();
      const labels = await table
        .locator("tbody")
        .getByRole("row")
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("aria-label")));
      expect(labels).toEqual([`Open call ${marker.callId}`, `Open call ${ours.callId}`]);
    } finally {
      await browser.close();
      udp.close();
    }
  },
  120_000,
);
