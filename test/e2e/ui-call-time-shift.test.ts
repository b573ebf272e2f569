/**
 * The call window's note on shifted times, in a real browser (docs/CALL-VIEW.md "Shifted times"):
 * a call replayed over HEP UDP with 2012 agent times (outside the default accepted window) is
 * stored shifted with its spacing kept; opened through the UI, the window says so above its
 * content, and a call with in-window times has no note.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";

const PASSWORD = "ui-time-shift-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

function callPackets(callId: string, t0Us: number, captureId: number): Uint8Array[] {
  const p: CallParams = { callId, from: "1001", to: "1002", fromTag: "f-1", toTag: "t-1" };
  const A = "10.41.0.1";
  const B = "10.41.0.2";
  const msgs: Array<[string, string, string]> = [
    [A, B, invite({ ...p, srcIp: A })],
    [B, A, response(180, "Ringing", "INVITE", p)],
    [B, A, response(200, "OK", "INVITE", p)],
    [A, B, request("ACK", { ...p, cseq: 1 })],
  ];
  return msgs.map(([src, dst, payload], i) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: t0Us + i * 100_000,
      protoType: 1,
      captureId,
      payload,
    }),
  );
}

peerTest(
  "call window: a note says the times were shifted and the spacing kept; none for a call with good times",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-time-shift-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const run = crypto.randomUUID().slice(0, 8);
    const oldCall = `shift-2012-${run}`;
    const goodCall = `shift-now-${run}`;
    const udp = await Bun.udpSocket({});
    for (const pk of [
      ...callPackets(oldCall, Date.UTC(2012, 0, 15, 8, 30) * 1000, 801),
      ...callPackets(goodCall, (Date.now() - 60_000) * 1000, 802),
    ])
      udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("both calls in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id IN ($1, $2)`,
        [oldCall, goodCall],
      );
      return Number(r.rows[0]!.n) === 8;
    });

    const browser: Browser = await chromium.launch({
      executablePath: Bun.which("chromium") ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const consoleErrors: string[] = [];
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      const open = async (callId: string) => {
        const form = page.getByRole("form", { name: "Search call" });
        await form.getByLabel("Call-ID").fill(callId);
        await form.getByRole("button", { name: "Search" }).click();
        // The row of this call (not a stale row of the previous search).
        const row = page
          .getByRole("table", { name: "Search results" })
          .getByRole("row", { name: `Open call ${callId}` });
        await row.first().click();
        const dialog = page.getByRole("dialog");
        await dialog.getByText("4 messages").waitFor();
        return dialog;
      };

      const shifted = await open(oldCall);
      const note = shifted.getByRole("note");
      await note.waitFor();
      expect(await note.textContent()).toMatch(
        /^Times shifted by 14 y \d+ d: the agent's clock was outside the accepted window; spacing kept$/,
      );
      await page.keyboard.press("Escape");
      await shifted.waitFor({ state: "detached" });

      const good = await open(goodCall);
      expect(await good.getByRole("note").count()).toBe(0);
      await page.keyboard.press("Escape");
      await good.waitFor({ state: "detached" });
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  90_000,
);
