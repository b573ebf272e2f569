/**
 * The learning games of the Games dashboard in a real browser (docs/GAMES.md "SIP Dialog Master", "Jitter Buffer Hero"): a call and
 * its RTCP are ingested as HEP over UDP, then SIP Dialog Master quizzes on that captured call and
 * Jitter Buffer Hero plays a round on its RTCP jitter. Keyboard and mouse, Esc closes the help,
 * nothing cut at the default widget size, no console errors. Roles and accessible names only.
 */
import { expect } from "bun:test";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { CHROMIUM_ARGS, signIn } from "./ui-live-harness.ts";

const PASSWORD = "ui-games-password-1";
const CALLER = "10.30.0.11";
const CALLEE = "10.30.0.52";
/** RTCP interarrival jitter in RTP units (8 kHz): 240 is 30 ms, 400 is 50 ms. */
const RTCP_JITTER = [240, 400];

function callPackets(callId: string, t0Us: number): Uint8Array[] {
  const p = { callId, from: "1001", to: "2002", fromTag: "f-1" };
  const hep = (payload: string, atMs: number, src: string, dst: string, proto = 1) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: proto === 5 ? 40001 : 5060,
      dstPort: proto === 5 ? 42001 : 5060,
      timestampUs: t0Us + atMs * 1000,
      protoType: proto,
      captureId: 2001,
      nodeName: "edge-games",
      ...(proto === 5 ? { correlationId: callId } : {}),
      payload,
    });
  const rtcp = (atMs: number, jitter: number) =>
    hep(
      JSON.stringify({
        type: 200,
        ssrc: 1,
        report_blocks: [{ source_ssrc: 2, fraction_lost: 0, packets_lost: 0, ia_jitter: jitter }],
      }),
      atMs,
      CALLER,
      CALLEE,
      5,
    );
  return [
    hep(invite({ ...p, srcIp: CALLER, mediaPort: 40000 }), 0, CALLER, CALLEE),
    hep(response(100, "Trying", "INVITE", p), 20, CALLEE, CALLER),
    hep(response(180, "Ringing", "INVITE", { ...p, toTag: "t-1" }), 400, CALLEE, CALLER),
    hep(response(200, "OK", "INVITE", { ...p, toTag: "t-1" }), 4_000, CALLEE, CALLER),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 4_030, CALLER, CALLEE),
    rtcp(9_000, RTCP_JITTER[0]!),
    rtcp(14_000, RTCP_JITTER[1]!),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 20_000, CALLER, CALLEE),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 20_030, CALLEE, CALLER),
  ];
}

/** The widget body neither scrolls nor cuts, nor does its question panel: the content fits the default size. */
async function expectFits(region: Locator): Promise<void> {
  const boxes = await region.evaluate((el) =>
    [el.querySelector(".widget-body"), el.querySelector('[aria-label="Question"]')]
      .filter((x) => x !== null)
      .map((b) => ({ sh: b.scrollHeight, ch: b.clientHeight, sw: b.scrollWidth, cw: b.clientWidth })),
  );
  expect(boxes.length).toBeGreaterThan(0);
  for (const box of boxes) {
    expect(box.sh).toBeLessThanOrEqual(box.ch);
    expect(box.sw).toBeLessThanOrEqual(box.cw);
  }
}

/** Signs in, collects console and script errors from then on, opens the Games dashboard. */
async function openGames(browser: Browser, a: TestAppliance): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await signIn(page, a, PASSWORD);
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.getByRole("tab", { name: "Games", exact: true }).click();
  return { page, errors };
}

const scoreOf = async (status: Locator) => Number(/Score (\d+)/.exec(await status.innerText())?.[1] ?? Number.NaN);

peerTest(
  "Games dashboard: SIP Dialog Master quizzes on a captured call, Jitter Buffer Hero plays a round on captured RTCP jitter",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-games-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake } = a.app;
    const callId = `games-${crypto.randomUUID()}@pbx.example.com`;
    const udp = await Bun.udpSocket({});
    for (const pkt of callPackets(callId, (Date.now() - 60_000) * 1000))
      udp.send(pkt, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the call and its RTCP in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1) AS sip, (SELECT count(*) FROM svc_lake.main.hep_proto_5_default WHERE cid = $1) AS rtcp`,
        [callId],
      );
      return Number(r.rows[0]!.sip) === 7 && Number(r.rows[0]!.rtcp) === 2;
    });

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const { page, errors } = await openGames(browser, a);

      // SIP Dialog Master: the captured call is chosen, the quiz follows its ladder.
      const sdm = page.getByRole("region", { name: "SIP Dialog Master" });
      const score = sdm.getByRole("status", { name: "Score" });
      const question = sdm.getByRole("region", { name: "Question" });
      await question.getByText("After INVITE (CSeq 1 INVITE), which message must follow?").waitFor();
      expect(await score.innerText()).toBe("Score 0 · 0/0 right · question 1 of 6");
      expect(await sdm.getByLabel("Flow").locator("option:checked").innerText()).toBe(
        `1001 → 2002 · ${callId.slice(0, 27)}…`,
      );
      expect(await sdm.getByRole("list", { name: "Messages shown" }).getByRole("listitem").allInnerTexts()).toEqual([
        "1. A→B INVITE CSeq 1 INVITE",
      ]);
      await expectFits(sdm);
      // Right by mouse: 10 points, the next message is revealed.
      await question.getByRole("button", { name: /^\d\. 100 Trying$/ }).click();
      await sdm
        .getByRole("alert")
        .filter({ hasText: "Right." })
        .getByText(/§8\.2\.6\.1/)
        .waitFor();
      expect(await scoreOf(score)).toBe(10);
      await expectFits(sdm);
      await page.keyboard.press("Enter");
      // Wrong on purpose: the dialog is not Call-ID + Via branch; the explanation cites §12.
      await question.getByText("180 Ringing created the dialog. Which values identify it?").waitFor();
      await question.getByRole("button", { name: /Via branch/ }).click();
      const wrong = sdm.getByRole("alert").filter({ hasText: "Not quite: Call-ID + From tag f-1 + To tag t-1." });
      await wrong.getByText(/RFC 3261 §12/).waitFor();
      expect(await score.innerText()).toContain("1/2 right");
      expect(await scoreOf(score)).toBe(10);
      await expectFits(sdm);
      await page.keyboard.press("n");
      // Right by keyboard: the digit of the ACK answer after the 200 OK to INVITE.
      await question.getByText("After 200 OK (CSeq 1 INVITE), which message must follow?").waitFor();
      expect(await score.innerText()).toContain("question 3 of 6");
      const names = await question
        .getByRole("group", { name: "Answers" })
        .getByRole("button")
        .evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      const ack = names.find((n) => /^\d\. ACK$/.test(n))!;
      // Focus followed the game (Next, then the first answer), so the digit reaches it.
      await page.keyboard.press(ack[0]!);
      await sdm
        .getByRole("alert")
        .filter({ hasText: "Right." })
        .getByText(/§13\.2\.2\.4/)
        .waitFor();
      expect(await scoreOf(score)).toBe(20); // a new streak: 10 again
      expect(await sdm.getByRole("list", { name: "Messages shown" }).getByRole("listitem").count()).toBe(5);

      // A message's headers from the ladder: the dialog identifiers as captured; Esc returns to the call.
      const step3 = sdm.getByRole("button", { name: "3. B to A 180 Ringing, CSeq 1 INVITE: show the headers" });
      await step3.click();
      const headers = sdm.getByRole("dialog", { name: "Headers of message 3" });
      await headers.getByRole("list", { name: "Headers" }).getByText(`Call-ID: ${callId}`, { exact: true }).waitFor();
      await headers.getByText("To: <sip:2002@example.net>;tag=t-1", { exact: true }).waitFor();
      await expectFits(sdm);
      await page.keyboard.press("Escape");
      await headers.waitFor({ state: "hidden" });
      expect(await step3.evaluate((el) => el === document.activeElement)).toBe(true);

      // How to play: a popover that Esc closes.
      await sdm.getByRole("button", { name: "How to play" }).click();
      const help = page.getByRole("dialog", { name: "How to play SIP Dialog Master" });
      await help.waitFor();
      await page.keyboard.press("Escape");
      await help.waitFor({ state: "hidden" });

      // The offline textbook flow: a fresh quiz on the reliable-180 call.
      await sdm.getByLabel("Flow").selectOption({ label: "Textbook: call with a reliable 180 (RFC 3262)" });
      // The first question reads the same in both flows: wait for the new flow's count, not the question.
      await score.filter({ hasText: "question 1 of 8" }).waitFor();
      await question.getByText("After INVITE (CSeq 1 INVITE), which message must follow?").waitFor();
      expect(await score.innerText()).toBe("Score 0 · 0/0 right · question 1 of 8");

      // Jitter Buffer Hero: phases from the captured RTCP (240 RTP units at 8 kHz = 30 ms).
      const jbh = page.getByRole("region", { name: "Jitter Buffer Hero" });
      await jbh.getByText("Jitter of 2 captured RTCP reports, then synthetic phases.").waitFor();
      await jbh.getByText(/Phase 1\/6 · jitter 30 ms \(RTCP\)/).waitFor();
      await jbh.scrollIntoViewIfNeeded();
      await expectFits(jbh);
      const jScore = jbh.getByRole("status", { name: "Score" });
      expect(await scoreOf(jScore)).toBe(0);
      const slider = jbh.getByRole("slider", { name: "Playout buffer" });
      expect(await slider.inputValue()).toBe("40");
      await jbh.getByRole("button", { name: "Start" }).click();
      await waitFor("points scored", async () => (await scoreOf(jScore)) > 0, 10_000);
      // ↑ in the game area deepens the buffer by 5 ms, PgUp by 20.
      await jbh.getByRole("img", { name: /^Packets of the last 2 s/ }).click();
      await page.keyboard.press("ArrowUp");
      await page.keyboard.press("PageUp");
      expect(await slider.inputValue()).toBe("65");
      await jbh.getByText("65 ms", { exact: true }).waitFor();
      await jbh.getByText(/round over: \d+ % of par/).waitFor({ timeout: 30_000 });
      const final = await scoreOf(jScore);
      expect(final).toBeGreaterThan(0);
      await jbh.getByText(/Phase 6\/6 · jitter 8 ms \(synthetic\)/).waitFor();
      await jbh
        .getByText(/^Best fixed buffer per phase: 30 ms jitter → \d+ ms, 50 ms jitter → \d+ ms, 45 ms jitter/)
        .waitFor();
      await jbh.getByRole("button", { name: "New round" }).waitFor();
      await expectFits(jbh);

      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);

peerTest(
  "Games dashboard with nothing captured: SIP Dialog Master says how to get traffic in and plays a textbook flow, Jitter Buffer Hero a synthetic profile",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-games-empty-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const { page, errors } = await openGames(browser, a);

      const sdm = page.getByRole("region", { name: "SIP Dialog Master" });
      await sdm
        .getByRole("status")
        .filter({ hasText: /^No SIP calls captured in the last 24 hours\. Send HEP .* UDP\/TCP port 9060/ })
        .waitFor();
      expect(await sdm.getByLabel("Flow").locator("option").allInnerTexts()).toEqual([
        "Textbook: call with a reliable 180 (RFC 3262)",
        "Textbook: call cancelled while ringing",
      ]);
      await sdm.getByLabel("Flow").selectOption({ label: "Textbook: call cancelled while ringing" });
      const question = sdm.getByRole("region", { name: "Question" });
      await question.getByText("After INVITE (CSeq 314159 INVITE), which message must follow?").waitFor();
      await question.getByRole("button", { name: /^\d\. 100 Trying$/ }).click();
      expect(await sdm.getByRole("status", { name: "Score" }).innerText()).toBe(
        "Score 10 · 1/1 right · question 1 of 7",
      );
      await expectFits(sdm);

      const jbh = page.getByRole("region", { name: "Jitter Buffer Hero" });
      await jbh.getByText("No RTCP captured in the last 24 hours: a synthetic jitter profile plays.").waitFor();
      await jbh.getByText(/Phase 1\/6 · jitter 4 ms \(synthetic\)/).waitFor();
      await jbh.scrollIntoViewIfNeeded();
      await expectFits(jbh);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
