/**
 * The ladder in a real browser (docs/CALL-VIEW.md): a call between two phones on
 * one host (same IP, ports 5062 and 5064) through a proxy, ingested as HEP over UDP with a copy of
 * the INVITE from a second capture point, an RTCP report and a log line. Opened through the UI:
 * one column per port, labels uncut, hide-duplicates and the RTCP/log markers toggled, the
 * IP / IP:port / alias column choice. Screenshot: docs/screenshots/ladder-ports.png.
 */
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Locator } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-ladder-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const HOST = "10.40.0.7"; // both phones
const PROXY = "10.40.0.1";
const LONG_183 = "183 Session Progress Early Media From The Announcement Server";
const LOG_TEXT = "WARN dialog 7f3a: callee answered on a second fork, the first fork was cancelled";

function callPackets(callId: string, t0Us: number): Uint8Array[] {
  const p = { callId, from: "1001", to: "1002", fromTag: "f-1" };
  const hep = (
    payload: string,
    atMs: number,
    src: [string, number],
    dst: [string, number],
    o: { proto?: number; capture?: number; node?: string; cid?: string } = {},
  ) =>
    encodeHep3({
      srcIp: src[0],
      srcPort: src[1],
      dstIp: dst[0],
      dstPort: dst[1],
      timestampUs: t0Us + Math.round(atMs * 1000),
      protoType: o.proto ?? 1,
      captureId: o.capture ?? 2001,
      nodeName: o.node ?? "edge-a",
      ...(o.cid ? { correlationId: o.cid } : {}),
      payload,
    });
  const A: [string, number] = [HOST, 5062];
  const B: [string, number] = [HOST, 5064];
  const P: [string, number] = [PROXY, 5060];
  const ok = response(200, "OK", "INVITE", { ...p, toTag: "t-1" });
  const progress = response(183, "Session Progress Early Media From The Announcement Server", "INVITE", {
    ...p,
    toTag: "t-1",
  });
  const inv = invite({ ...p, srcIp: HOST, mediaPort: 40000 });
  return [
    hep(inv, 0, A, P),
    hep(inv, 0.3, A, P, { capture: 2002, node: "edge-b" }), // the same packet seen by a second capture point
    hep(response(100, "Trying", "INVITE", p), 10, P, A),
    hep(inv, 20, P, B),
    hep(progress, 200, B, P),
    hep(progress, 210, P, A),
    hep(ok, 2_000, B, P),
    hep(ok, 2_010, P, A),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 2_030, A, P),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 2_040, P, B),
    hep(
      JSON.stringify({
        type: 200,
        ssrc: 1,
        report_blocks: [{ source_ssrc: 2, fraction_lost: 13, packets_lost: 4, ia_jitter: 31 }],
      }),
      5_000,
      [HOST, 40001],
      [HOST, 42001],
      {
        proto: 5,
        cid: callId,
      },
    ),
    hep(LOG_TEXT, 6_000, P, P, { proto: 100, cid: callId }),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_000, A, P),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_010, P, B),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_030, B, P),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 9_040, P, A),
  ];
}
const SIP_ROWS = 14; // 13 messages and one copy

/** Names of the column headers and whether each shows its whole text. */
const headers = (dialog: Locator) =>
  dialog
    .getByRole("list", { name: "Endpoints" })
    .getByRole("listitem")
    .evaluateAll((els) =>
      els.map((e) => ({
        name: e.getAttribute("aria-label") ?? "",
        fits: e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight,
        x: e.getBoundingClientRect().x + e.getBoundingClientRect().width / 2,
      })),
    );

peerTest(
  "ladder: same IP on two ports is two columns, labels uncut, duplicates hidden and counted, RTCP and log markers, IP / IP:port / alias",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-ladder-");
    // SVC_UPDATE_SCREENSHOTS=1 writes the screenshot to docs/screenshots/ (commit it), as ui-dashboard does.
    const shots =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const base = coordinatorUrl!;
    const callId = `ladder-${crypto.randomUUID()}@phones.example.com`;
    const udp = await Bun.udpSocket({});
    for (const pk of callPackets(callId, (Date.now() - 60_000) * 1000))
      udp.send(pk, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the call's rows in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1) AS sip, (SELECT count(*) FROM svc_lake.main.hep_proto_5_default WHERE cid = $1) + (SELECT count(*) FROM svc_lake.main.hep_proto_100_default WHERE cid = $1) AS other`,
        [callId],
      );
      return Number(r.rows[0]!.sip) === SIP_ROWS && Number(r.rows[0]!.other) === 2;
    });
    const login = await fetch(`${base}/api/v4/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const { token } = (await login.json()) as { token: string };
    const alias = await fetch(`${base}/api/v4/aliases`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ ip: PROXY, name: "proxy-a", group: "core", active: true }),
    });
    expect(alias.status).toBe(201);

    const browser: Browser = await chromium.launch({
      executablePath: Bun.which("chromium") ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const consoleErrors: string[] = [];
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      await page.goto(`${base}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill(callId);
      await form.getByRole("button", { name: "Search" }).click();
      const results = page.getByRole("table", { name: "Search results" });
      await page.getByText(`${SIP_ROWS} messages`).waitFor();
      await results
        .getByRole("row", { name: /^Open call/ })
        .first()
        .click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText(`${SIP_ROWS} messages`).waitFor();

      // 1. IP:port by default (one IP, two ports): three columns, each header whole.
      await dialog.getByRole("radio", { name: "IP:port", checked: true }).waitFor();
      const cols = await headers(dialog);
      expect(cols.map((c) => c.name)).toEqual([`${HOST}:5062`, `${PROXY}:5060 (proxy-a)`, `${HOST}:5064`]);
      expect(cols.every((c) => c.fits)).toBe(true);

      // 2. Duplicates hidden by default and counted; arrows join the right columns.
      const flow = dialog.getByRole("group", { name: /^Call flow/ });
      const arrows = flow.getByRole("button");
      await dialog.getByRole("status", { name: "Duplicates" }).getByText("1 duplicate hidden").waitFor();
      expect(await arrows.count()).toBe(SIP_ROWS - 1);
      const names = await arrows.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      expect(names[0]).toStartWith(`1. INVITE (SDP) from ${HOST}:5062 to ${PROXY}:5060 (proxy-a) at `);
      expect(names[0]).toContain("seen by capture 2001 (edge-a) and capture 2002 (edge-b)");
      expect(names[2]).toStartWith(`3. INVITE (SDP) from ${PROXY}:5060 (proxy-a) to ${HOST}:5064 at `);

      // 3. The long 183 label is whole and lies between the lifelines it joins (proxy → phone A).
      const label = flow.getByRole("button", { name: /^5\. 183 / }).getByText(LONG_183, { exact: true });
      const box = (await label.boundingBox())!;
      const [xA, xP] = [cols[0]!.x, cols[1]!.x];
      expect(box.x).toBeGreaterThan(xA);
      expect(box.x + box.width).toBeLessThan(xP);

      // 4. Showing duplicates: the copy is an arrow of its own, named as a copy; the count follows.
      await dialog.getByLabel("Hide duplicates").uncheck();
      await dialog.getByRole("status", { name: "Duplicates" }).getByText("1 duplicate shown").waitFor();
      expect(await arrows.count()).toBe(SIP_ROWS);
      expect(await flow.getByRole("button", { name: /copy from capture 2002 \(edge-b\)$/ }).count()).toBe(1);
      await dialog.getByLabel("Hide duplicates").check();
      await dialog.getByRole("status", { name: "Duplicates" }).getByText("1 duplicate hidden").waitFor();
      expect(await arrows.count()).toBe(SIP_ROWS - 1);

      // 5. RTCP and log markers on the timeline, with their summaries; the log opens in the detail pane.
      const events = dialog.getByRole("group", { name: /^RTCP, media and log events/ });
      const markers = events.getByRole("button");
      await dialog
        .getByRole("status", { name: "RTCP, media and log events" })
        .getByText("2 (1 RTCP, 1 log)", { exact: true })
        .waitFor();
      expect(await markers.count()).toBe(2);
      const markerNames = await markers.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      expect(markerNames[0]).toMatch(
        /^RTCP report at [\d:.]+: RTCP SR · jitter 31 · loss 5\.1 % · 4 lost · MOS 3\.91 · 10\.40\.0\.7:40001 → 10\.40\.0\.7:42001$/,
      );
      expect(markerNames[1]).toMatch(new RegExp(`^Log event at [\\d:.]+: ${LOG_TEXT}$`));
      for (const line of await events
        .getByRole("button", { name: /^Log event/ })
        .locator("tspan")
        .allTextContents())
        expect(LOG_TEXT).toContain(line);
      await markers.nth(1).click();
      await dialog.getByRole("region", { name: "Log event" }).getByText(LOG_TEXT).waitFor();
      await dialog.getByLabel("RTCP, media and logs").uncheck();
      await events.getByRole("button").first().waitFor({ state: "detached" });
      expect(await markers.count()).toBe(0);
      await dialog.getByLabel("RTCP, media and logs").check();
      await markers.nth(1).waitFor();

      await page.screenshot({ path: join(shots, "ladder-ports.png") });
      // 6. One column per IP when asked (the phones merge: their messages become self-arrows), and alias titles.
      await dialog.getByRole("radio", { name: "IP", exact: true }).click();
      expect((await headers(dialog)).map((c) => c.name)).toEqual([HOST, `${PROXY} (proxy-a)`]);
      await dialog.getByRole("radio", { name: "Alias" }).click();
      const aliasCols = await headers(dialog);
      expect(aliasCols.map((c) => c.name)).toEqual([`${HOST}:5062`, `proxy-a (${PROXY})`, `${HOST}:5064`]);
      expect(aliasCols.every((c) => c.fits)).toBe(true);

      // 7. Narrow window: the ladder scrolls sideways instead of squeezing, and the last column is reachable.
      await page.setViewportSize({ width: 760, height: 860 });
      const last = dialog.getByRole("list", { name: "Endpoints" }).getByRole("listitem").last();
      await last.scrollIntoViewIfNeeded();
      const lastBox = (await last.boundingBox())!;
      expect(lastBox.x + lastBox.width).toBeLessThanOrEqual(760);
      expect((await headers(dialog)).every((c) => c.fits)).toBe(true);

      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  60_000,
);
