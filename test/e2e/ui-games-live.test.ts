/**
 * SIPetris and Packet Defender in Chromium fed by the live stream (docs/GAMES.md): SIP sent as HEP
 * over UDP becomes SIPetris pieces (a 486 a garbage row) and Packet Defender packets; the keys
 * drop pieces, change lane and shoot the failure. With the stream off both say so and Packet
 * Defender plays practice traffic. No console errors.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, response } from "../fixtures/sip.ts";
import { hep, udpSender } from "../integration/stream-helpers.ts";
import { canvasColours, startGamesBrowser } from "./ui-games-harness.ts";

const region = (page: Page, name: string) => page.getByRole("region", { name });
const stat = async (page: Page, widget: string, term: string) => {
  const terms = await region(page, widget).getByRole("term").allTextContents();
  return (await region(page, widget).getByRole("definition").nth(terms.indexOf(term)).textContent()) ?? "";
};

peerTest(
  "SIPetris and Packet Defender: live SIP becomes pieces and packets; keys drop, change lane and shoot; stream off = practice",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-games-live-e2e-");
    await using g = await startGamesBrowser(
      { coordinator: { hep_stream: { enable: true } }, storage: { lakehouse: { enable: true } } },
      dir.path,
    );
    const page = await g.open("admin");
    await page.getByRole("tab", { name: "Games", exact: true }).click();
    const sip = region(page, "SIPetris");
    const pd = region(page, "Packet Defender");
    await sip.getByRole("status").filter({ hasText: "Live capture: live" }).waitFor();
    await pd.getByRole("status").filter({ hasText: "Live capture: live" }).waitFor();

    const udp = await udpSender(g.a.app.ingest!.listeners.udp!.port());
    const call = { callId: `games-${crypto.randomUUID()}`, from: "1001", to: "2002", fromTag: "f-1" };
    await waitFor(
      "the INVITE as a SIPetris piece",
      async () => {
        udp.send([hep({ payload: invite(call) })]);
        return (await sip.getByRole("list", { name: "Latest SIP messages" }).getByText("INVITE → I").count()) > 0;
      },
      20_000,
      300,
    );
    expect(Number(await stat(page, "SIPetris", "From SIP"))).toBeGreaterThanOrEqual(1);
    udp.send([
      hep({
        srcIp: "10.0.0.2",
        dstIp: "10.0.0.1",
        payload: response(486, "Busy Here", "INVITE", { ...call, toTag: "t-1" }),
      }),
    ]);
    await sip
      .getByRole("list", { name: "Latest SIP messages" })
      .getByText("486 Busy Here → garbage row")
      .first()
      .waitFor();

    // SIPetris waits for focus (nothing falls on a dashboard left open); Space drops the piece.
    await sip.getByText("Paused: click the board to play").waitFor();
    const board = sip.getByRole("group", { name: /^SIPetris board/ });
    await board.focus();
    await sip.getByText("Paused: click the board to play").waitFor({ state: "detached" });
    await page.keyboard.press("Space");
    await waitFor("a piece locked", async () => Number(await stat(page, "SIPetris", "Pieces")) >= 1);
    expect(
      await canvasColours(
        page,
        await sip
          .getByRole("img")
          .getAttribute("aria-label")
          .then((n) => n ?? ""),
      ),
    ).toBeGreaterThan(2);

    // Packet Defender: the 486 is a failure in some lane; go to that lane and shoot it.
    const item = pd
      .getByRole("list", { name: "Packets in flight" })
      .getByText(/^486 Busy Here · lane \d · failure$/)
      .first();
    await item.waitFor();
    const lane = Number((await item.textContent())!.match(/lane (\d)/)![1]);
    const field = pd.getByRole("group", { name: /^Packet Defender field/ });
    await field.focus();
    for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowUp");
    for (let i = 1; i < lane; i++) await page.keyboard.press("ArrowDown");
    expect(await stat(page, "Packet Defender", "Lane")).toBe(String(lane));
    await page.keyboard.press("Space");
    await waitFor("the failure shot", async () => (await stat(page, "Packet Defender", "Failures shot")) === "1");
    expect(Number(await stat(page, "Packet Defender", "Score"))).toBeGreaterThanOrEqual(10);
    udp.close();
    expect(g.consoleErrors).toEqual([]);

    // Stream off: both say so; Packet Defender plays practice traffic.
    await using dir2 = tempDir("svc-games-live-e2e-");
    await using off = await startGamesBrowser({}, dir2.path);
    const p2 = await off.open("admin");
    await p2.getByRole("tab", { name: "Games", exact: true }).click();
    await region(p2, "SIPetris")
      .getByRole("status")
      .filter({
        hasText:
          "Live capture: off (The live stream is off on this server (coordinator.hep_stream.enable).) · pieces from a shuffled bag",
      })
      .waitFor();
    await region(p2, "Packet Defender").getByRole("status").filter({ hasText: "practice traffic" }).waitFor();
    // Paused until the field has focus; then practice packets arrive.
    await region(p2, "Packet Defender").getByText("Paused: click the field to play").waitFor();
    await region(p2, "Packet Defender")
      .getByRole("group", { name: /^Packet Defender field/ })
      .click();
    await region(p2, "Packet Defender")
      .getByRole("list", { name: "Packets in flight" })
      .getByRole("listitem")
      .first()
      .waitFor();
    expect(await region(p2, "Packet Defender").getByText("Paused: click the field to play").count()).toBe(0);
    // The browser logs the preflight's 404 of the disabled stream; nothing else.
    expect(off.consoleErrors.filter((e) => !e.endsWith("status of 404 (Not Found)"))).toEqual([]);
  },
  240_000,
);
