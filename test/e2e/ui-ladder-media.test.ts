/**
 * Media reports on the ladder in a real browser (docs/CALL-VIEW.md "RTCP and log events"): a call
 * ingested as HEP over UDP with an RTCP report, an RTP agent's media report (HEP 34, no correlation
 * id: found by the SDP's media address) and loadgen's synthetic report (docs/LOADGEN.md "Media and
 * RTCP reports"). The MEDIA markers show their summaries whole in a band of their own, are counted in
 * the toolbar, and open in the detail pane by click and by Enter.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { mediaReportPackets } from "../../src/loadgen/media-report.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response, withSdp } from "../fixtures/sip.ts";

const PASSWORD = "ui-ladder-media-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const A_IP = "10.41.0.1";
const B_IP = "10.41.0.2";
const ANSWER_SDP = `v=0\r\no=- 1 1 IN IP4 ${B_IP}\r\ns=-\r\nc=IN IP4 ${B_IP}\r\nt=0 0\r\nm=audio 42000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;
const AGENT = "Media report · MOS 3.87 · 12 lost · jitter 4.5 ms";
const SYNTHETIC = "Media report (synthetic, no RTP measured) · MOS 4.41 · 0 lost · jitter 0 ms";

function callPackets(callId: string, t0Ms: number): Uint8Array[] {
  const p = { callId, from: "1001", to: "1002" };
  const hep = (
    payload: string,
    atMs: number,
    src: [string, number],
    dst: [string, number],
    o: { proto?: number; cid?: string } = {},
  ) =>
    encodeHep3({
      srcIp: src[0],
      srcPort: src[1],
      dstIp: dst[0],
      dstPort: dst[1],
      timestampUs: (t0Ms + atMs) * 1000,
      protoType: o.proto ?? 1,
      captureId: 2001,
      nodeName: "edge-a",
      ...(o.cid ? { correlationId: o.cid } : {}),
      payload,
    });
  const A: [string, number] = [A_IP, 5060];
  const B: [string, number] = [B_IP, 5060];
  const agent = JSON.stringify({
    TYPE: "INTERIM",
    CODEC_NAME: "PCMU",
    MOS: 3.87,
    PACKET_LOSS: 12,
    packets_lost: 12,
    JITTER: 4.5,
  });
  return [
    hep(invite({ ...p, srcIp: A_IP, mediaPort: 40000 }), 0, A, B),
    hep(withSdp(response(200, "OK", "INVITE", { ...p, toTag: "t-1" }), B_IP, 42000), 500, B, A),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 520, A, B),
    hep(
      JSON.stringify({
        type: 200,
        ssrc: 1,
        report_blocks: [{ source_ssrc: 2, fraction_lost: 0, packets_lost: 0, ia_jitter: 8 }],
      }),
      4_000,
      [A_IP, 40001],
      [B_IP, 42001],
      { proto: 5, cid: callId },
    ),
    // An RTP agent's report without correlation id, on the offer's and answer's RTP addresses.
    hep(agent, 5_000, [B_IP, 42000], [A_IP, 40000], { proto: 34 }),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_000, A, B),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_020, B, A),
    // What loadgen sends when the call has ended: one synthetic report per direction.
    ...mediaReportPackets(
      callId,
      { local: { ip: A_IP, port: 40000 }, remote: { ip: B_IP, port: 42000 }, answerSdp: ANSWER_SDP, mediaMs: 8_480 },
      { captureId: 2001, authKey: "" },
      t0Ms + 9_100,
    ),
  ];
}

/** WCAG contrast ratio of two CSS colours (`rgb(r, g, b)`). */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+/g) ?? []).slice(0, 3).map((x) => {
      const v = Number(x) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [lo, hi] = [lum(a), lum(b)].sort((x, y) => x - y);
  return (hi! + 0.05) / (lo! + 0.05);
}

peerTest(
  "ladder: media reports (HEP 34) are MEDIA markers with their summaries, counted, apart from RTCP, opening in the detail pane",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-ladder-media-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const callId = `media-${crypto.randomUUID()}@phones.example.com`;
    const packets = callPackets(callId, Date.now() - 60_000);
    const udp = await Bun.udpSocket({});
    for (const pk of packets) udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the call's rows in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call) + (SELECT count(*) FROM svc_lake.main.hep_proto_5_default) + (SELECT count(*) FROM svc_lake.main.hep_proto_34_default) AS n`,
      );
      return Number(r.rows[0]!.n) === packets.length;
    });

    const browser: Browser = await chromium.launch({
      executablePath: Bun.which("chromium") ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      await page.goto(`${coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill(callId);
      await form.getByRole("button", { name: "Search" }).click();
      await page.getByText("5 messages").waitFor();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: /^Open call/ })
        .first()
        .click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText("5 messages").waitFor();

      // 1. Four markers counted in the toolbar: one RTCP, three media reports, in time order.
      await dialog
        .getByRole("status", { name: "RTCP, media and log events" })
        .getByText("4 (1 RTCP, 3 media)", { exact: true })
        .waitFor();
      const events = dialog.getByRole("group", { name: /^RTCP, media and log events/ });
      const markers = events.getByRole("button");
      expect(await markers.count()).toBe(4);
      const names = await markers.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      expect(names[0]).toMatch(
        /^RTCP report at [\d:.]+: RTCP SR · jitter 8 · loss 0\.0 % · 0 lost · MOS 4\.41 · 10\.41\.0\.1:40001 → 10\.41\.0\.2:42001$/,
      );
      expect(names[1]).toMatch(
        new RegExp(
          `^Media report at [\\d:.]+: ${AGENT.replace(/\./g, "\\.")} · 10\\.41\\.0\\.2:42000 → 10\\.41\\.0\\.1:40000$`,
        ),
      );
      // loadgen's two reports carry one time: either may come first.
      const synthetic = names.slice(2).map((n) => n.replace(/ at [\d:.]+:/, ":"));
      expect(synthetic.toSorted()).toEqual([
        `Media report: ${SYNTHETIC} · ${A_IP}:40000 → ${B_IP}:42000`,
        `Media report: ${SYNTHETIC} · ${B_IP}:42000 → ${A_IP}:40000`,
      ]);

      // 2. Each marker's tag and band: MEDIA apart from RTCP, whole text inside the band, tag readable.
      const shapes = await markers.evaluateAll((els) =>
        els.map((e) => {
          const tag = e.querySelector("text.tag") as SVGTextElement;
          const band = e.querySelector("rect.band") as SVGRectElement;
          const text = e.querySelector("text.text") as SVGTextElement;
          const [t, b, x] = [tag.getBoundingClientRect(), band.getBoundingClientRect(), text.getBoundingClientRect()];
          return {
            tag: tag.textContent,
            text: Array.from(text.querySelectorAll("tspan"), (s) => s.textContent).join(" "),
            inside:
              x.left >= b.left &&
              x.right <= b.right &&
              x.top >= b.top &&
              x.bottom <= b.bottom &&
              t.right < x.left &&
              t.left >= b.left,
            tagColour: getComputedStyle(tag).fill,
            bandColour: getComputedStyle(band).fill,
          };
        }),
      );
      expect(shapes.map((s) => s.tag)).toEqual(["RTCP", "MEDIA", "MEDIA", "MEDIA"]);
      expect(shapes.every((s) => s.inside)).toBe(true);
      expect(shapes[1]!.text).toBe(`${AGENT} · ${B_IP}:42000 → ${A_IP}:40000`);
      expect(shapes[2]!.text).toBe(synthetic[0]!.replace("Media report: ", ""));
      expect(shapes[1]!.bandColour).not.toBe(shapes[0]!.bandColour);
      expect(shapes[1]!.tagColour).not.toBe(shapes[0]!.tagColour);
      for (const s of shapes) expect(contrast(s.tagColour, s.bandColour)).toBeGreaterThanOrEqual(4.5);

      // 3. A click opens the agent's report in the detail pane; Enter on the next one opens it.
      // The first report's decoded reply is held back until the second one is shown: a late reply
      // for the row selected before must not replace the one selected now.
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      let heldUrl = "";
      await page.route("**/api/v4/messages/*/decoded", async (route) => {
        if (!heldUrl) {
          heldUrl = route.request().url();
          await held;
        }
        await route.continue();
      });
      await markers.nth(1).click();
      const detail = dialog.getByRole("region", { name: "Media report" });
      await events.getByRole("button", { name: names[1]!, exact: true, pressed: true }).waitFor();
      await detail.getByText(`${B_IP}:42000 → ${A_IP}:40000`).waitFor();
      await markers.nth(2).focus();
      await page.keyboard.press("Enter");
      await events.getByRole("button", { name: names[2]!, exact: true, pressed: true }).waitFor();
      await detail.getByText(synthetic[0]!.split(" · ").pop()!).waitFor();
      const decoded = detail.getByLabel("Decoded report");
      await decoded.getByText('"synthetic": true').waitFor();
      expect(heldUrl).not.toBe("");
      const late = page.waitForResponse(heldUrl);
      release();
      await (await late).finished();
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      expect(await decoded.textContent()).toContain('"MOS": 4.41');
      await detail.getByRole("tab", { name: "Raw" }).click();
      const raw = await detail.getByLabel("Raw message").textContent();
      expect(JSON.parse(raw ?? "{}")).toMatchObject({ CODEC_NAME: "PCMU", MOS: 4.41, synthetic: true });

      // 4. Unticking the toggle takes the MEDIA markers off with the others.
      await dialog.getByLabel("RTCP, media and logs").uncheck();
      await markers.first().waitFor({ state: "detached" });
      await dialog.getByLabel("RTCP, media and logs").check();
      await markers.nth(3).waitFor();

      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  60_000,
);
