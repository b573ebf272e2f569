/**
 * The call view's live ladder in a real browser (docs/CALL-VIEW.md "Live"): a
 * call stored up to its ACK is opened through the UI, Live is turned on, and the BYE and its 200
 * sent as HEP over UDP appear as new arrows within seconds; the ring's replay of the stored
 * messages is not drawn twice, another call's traffic stays out, the restart of the server shows
 * the gap and the ladder goes on after the reconnect. Roles and accessible names only.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { hep, udpSender } from "../integration/stream-helpers.ts";
import { CHROMIUM_ARGS, restartOnSamePort, signIn } from "./ui-live-harness.ts";

const PASSWORD = "ui-live-ladder-password-1";
const PHONE = "10.50.0.11";
const PROXY = "10.50.0.1";
/** Seconds a new arrow may take: the stream delivers within a hand-over (100 ms) and a render. */
const ARRIVAL_MS = 5_000;

peerTest(
  "live ladder: Live adds the call's new messages as arrows, not the stored ones twice nor other calls; a server restart shows the gap",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-live-ladder-");
    // The ring fills with nobody subscribed (ingest.hep_stream.enable): Live's history replays the stored messages too.
    const overrides = {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, hep_stream: { enable: true } },
      ingest: { hep_stream: { enable: true } },
    };
    let a: TestAppliance = await startTestAppliance(dir.path, overrides);
    let udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    const call: CallParams = {
      callId: `live-ladder-${crypto.randomUUID()}@pbx`,
      from: "1001",
      to: "2002",
      fromTag: "f-1",
      toTag: "t-1",
    };
    const t0Us = (Date.now() - 20_000) * 1000;
    const out = (payload: string, ms: number) =>
      hep({ srcIp: PHONE, dstIp: PROXY, srcPort: 5060, dstPort: 5060, tsUs: t0Us + ms * 1000, payload });
    const back = (payload: string, ms: number) =>
      hep({ srcIp: PROXY, dstIp: PHONE, srcPort: 5060, dstPort: 5060, tsUs: t0Us + ms * 1000, payload });
    udp.send([
      out(invite({ ...call, srcIp: PHONE }), 0),
      back(response(100, "Trying", "INVITE", call), 10),
      back(response(180, "Ringing", "INVITE", call), 500),
      back(response(200, "OK", "INVITE", call), 3_000),
      out(request("ACK", { ...call, cseq: 1 }), 3_020),
    ]);
    await waitFor("the call's five rows in the lake", async () => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1",
        [call.callId],
      );
      return Number(r.rows[0]!.n) === 5;
    });

    const browser: Browser = await chromium.launch({
      executablePath: Bun.which("chromium") ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const scriptErrors: string[] = [];
      page.on("pageerror", (e) => scriptErrors.push(String(e)));
      await signIn(page, a, PASSWORD);
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill(call.callId);
      await form.getByRole("button", { name: "Search" }).click();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: /^Open call/ })
        .first()
        .click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText("5 messages").waitFor();
      const arrows = dialog.getByRole("group", { name: /^Call flow/ }).getByRole("button");
      expect(await arrows.count()).toBe(5);
      const status = dialog.getByRole("status", { name: "Live ladder" });

      await dialog.getByRole("button", { name: "Live", exact: true, pressed: false }).click();
      await dialog.getByRole("button", { name: "Live", exact: true, pressed: true }).waitFor();
      await status.getByText("Live · waiting for messages of this call").waitFor();

      // The BYE, and in the same breath another call's INVITE: only the BYE joins the ladder.
      udp.send([
        out(request("BYE", { ...call, cseq: 2 }), 20_000),
        out(invite({ ...call, callId: `other-${call.callId}`, srcIp: PHONE }), 20_001),
      ]);
      const bye = arrows.filter({ hasText: "BYE" });
      await bye.waitFor({ timeout: ARRIVAL_MS });
      expect(await bye.getAttribute("aria-label")).toMatch(
        new RegExp(`^6\\. BYE from ${PHONE} to ${PROXY} at [\\d:.]+, received live$`),
      );
      await status.getByText("Live · 1 new message").waitFor();

      // The server restarts: the client reconnects by itself and says what it missed.
      udp.close();
      a = await restartOnSamePort(a, dir.path, overrides);
      udp = await udpSender(a.app.ingest!.listeners.udp!.port());
      await dialog
        .getByRole("note")
        .filter({ hasText: /^Connection lost from [\d:.]+ to [\d:.]+: messages of that time/ })
        .waitFor({ timeout: 40_000 });
      await status.getByText("Live · 1 new message").waitFor();
      udp.send([back(response(200, "OK", "BYE", { ...call, cseq: 2 }), 20_050)]);
      const ok = arrows.filter({ hasText: "200 OK" }).last();
      await dialog.getByRole("button", { name: /^7\. 200 OK from / }).waitFor({ timeout: ARRIVAL_MS });
      expect(await ok.getAttribute("aria-label")).toMatch(
        new RegExp(`^7\\. 200 OK from ${PROXY} to ${PHONE} at [\\d:.]+, received live$`),
      );
      await status.getByText("Live · 2 new messages").waitFor();
      await dialog.getByText("5 messages + 2 live · 1 Call-ID").waitFor();
      // Exactly the five stored and the two live ones: the replays (history) were not drawn again.
      expect(await arrows.count()).toBe(7);
      const names = await arrows.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      expect(names.map((n) => /^\d+\. (.+?) from /.exec(n)?.[1])).toEqual([
        "INVITE (SDP)",
        "100 Trying",
        "180 Ringing",
        "200 OK",
        "ACK",
        "BYE",
        "200 OK",
      ]);
      expect(names.filter((n) => n.endsWith(", received live")).length).toBe(2);

      // A live arrow's pane: not in the lake yet, said so (no payload without allow_payload).
      await bye.click();
      const detail = dialog.getByRole("region", { name: "Message 6" });
      await detail.getByText("Received live and not stored yet: reopen the call to read it decoded.").waitFor();
      await detail.getByText(/The stream sent no payload/).waitFor();

      // Live off: the subscription ends, the arrows stay; Esc closes the window.
      await dialog.getByRole("button", { name: "Live", exact: true, pressed: true }).click();
      await status.getByText("2 messages added live").waitFor();
      await waitFor("no stream subscriber left", () => /^svc_stream_subscribers 0$/m.test(a.app.metrics.render()));
      expect(await arrows.count()).toBe(7);
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect(scriptErrors).toEqual([]);
    } finally {
      await browser.close();
      udp.close();
      await a[Symbol.asyncDispose]();
    }
  },
  120_000,
);
