/**
 * The dashboard in a real browser (docs/UI.md): Debian's chromium driven by playwright-core against the
 * appliance started in-process. A call is ingested as HEP over UDP in this test, then found,
 * opened and exported through the UI only (roles and accessible names, never CSS internals), and
 * the downloaded PCAP is read back by tshark.
 *
 * Screenshots of the main screens are taken on every run; with SVC_UPDATE_SCREENSHOTS=1 they are
 * written to docs/screenshots/ (commit them), otherwise to a temp dir.
 */
import { expect } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-e2e-password-1";
const ROOT = resolve(import.meta.dir, "../..");
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const CALLER = "10.20.0.11";
const PROXY = "10.20.0.1";
const CALLEE = "10.20.0.52";

/** An SDP answer in a response (the shared fixtures send responses without a body). */
function withSdp(msg: string, ip: string, port: number): string {
  const body = [
    "v=0",
    `o=- 2 2 IN IP4 ${ip}`,
    "s=-",
    `c=IN IP4 ${ip}`,
    "t=0 0",
    `m=audio ${port} RTP/AVP 0 101`,
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=sendrecv",
    "",
  ].join("\r\n");
  return msg.replace(
    "Content-Length: 0\r\n\r\n",
    `Content-Type: application/sdp\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
}

/**
 * A call from a phone through a proxy to a gateway: INVITE/100/180/200/ACK on both hops, 24 s of
 * talk, BYE/200; RTCP both ways with the Call-ID as correlation id.
 */
function callPackets(callId: string, t0Us: number): Uint8Array[] {
  const p = { callId, from: "1001", to: "2002", fromTag: "f-1" };
  const hep = (
    payload: string,
    atMs: number,
    src: string,
    dst: string,
    o: { proto?: number; sport?: number; dport?: number; cid?: string } = {},
  ) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: o.sport ?? 5060,
      dstPort: o.dport ?? 5060,
      timestampUs: t0Us + Math.round(atMs * 1000),
      protoType: o.proto ?? 1,
      captureId: 2001,
      nodeName: "edge-ui",
      ...(o.cid ? { correlationId: o.cid } : {}),
      payload,
    });
  const rtcp = (
    atMs: number,
    src: string,
    dst: string,
    sport: number,
    dport: number,
    jitter: number,
    fl: number,
    lost: number,
  ) =>
    hep(
      JSON.stringify({
        type: 200,
        ssrc: sport,
        report_blocks: [{ source_ssrc: dport, fraction_lost: fl, packets_lost: lost, ia_jitter: jitter }],
        mos: 4.2 - fl / 40,
      }),
      atMs,
      src,
      dst,
      {
        proto: 5,
        sport,
        dport,
        cid: callId,
      },
    );
  const ok = response(200, "OK", "INVITE", { ...p, toTag: "t-1" });
  return [
    hep(invite({ ...p, srcIp: CALLER, mediaPort: 40000 }), 0, CALLER, PROXY),
    hep(response(100, "Trying", "INVITE", p), 18.4, PROXY, CALLER),
    hep(invite({ ...p, srcIp: CALLER, mediaPort: 40000 }), 25.0, PROXY, CALLEE),
    hep(response(100, "Trying", "INVITE", p), 40.2, CALLEE, PROXY),
    hep(response(180, "Ringing", "INVITE", { ...p, toTag: "t-1" }), 390.0, CALLEE, PROXY),
    hep(response(180, "Ringing", "INVITE", { ...p, toTag: "t-1" }), 412.7, PROXY, CALLER),
    hep(withSdp(ok, CALLEE, 42000), 4_190.0, CALLEE, PROXY),
    hep(withSdp(ok, CALLEE, 42000), 4_210.2, PROXY, CALLER),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 4_236.9, CALLER, PROXY),
    hep(request("ACK", { ...p, toTag: "t-1", cseq: 1 }), 4_250.0, PROXY, CALLEE),
    rtcp(9_000, CALLER, CALLEE, 40001, 42001, 12, 0, 0),
    rtcp(9_300, CALLEE, CALLER, 42001, 40001, 9, 0, 0),
    rtcp(14_000, CALLER, CALLEE, 40001, 42001, 31, 5, 4),
    rtcp(14_300, CALLEE, CALLER, 42001, 40001, 14, 1, 1),
    rtcp(19_000, CALLER, CALLEE, 40001, 42001, 18, 2, 6),
    rtcp(19_300, CALLEE, CALLER, 42001, 40001, 11, 0, 1),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 24_500.5, CALLER, PROXY),
    hep(request("BYE", { ...p, toTag: "t-1", cseq: 2 }), 24_512.0, PROXY, CALLEE),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 24_530.0, CALLEE, PROXY),
    hep(response(200, "OK", "BYE", { ...p, toTag: "t-1", cseq: 2 }), 24_541.0, PROXY, CALLER),
  ];
}

const EXPECTED_FLOW = [
  "INVITE (SDP)",
  "100 Trying",
  "INVITE (SDP)",
  "100 Trying",
  "180 Ringing",
  "180 Ringing",
  "200 OK (SDP)",
  "200 OK (SDP)",
  "ACK",
  "ACK",
  "BYE",
  "BYE",
  "200 OK",
  "200 OK",
];
const SIP_MESSAGES = EXPECTED_FLOW.length;

peerTest(
  "dashboard: log in, search an ingested Call-ID, read the ladder in order, export the PCAP, QoS, admin pages, deep link, logout",
  [PEERS.chromium, PEERS.tshark],
  async () => {
    const built = await buildUi();
    expect(built.files.map((f) => f.path)).toContain("assets/app.js");
    const shots = process.env.SVC_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : undefined;
    await using dir = tempDir("svc-ui-e2e-");
    const shotDir = shots ?? join(dir.path, "shots");
    mkdirSync(shotDir, { recursive: true });
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, api_settings: { enable_token_access: true } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const base = coordinatorUrl!;
    const api = `${base}/api/v4`;

    // The call, as HEP over UDP.
    const callId = `ui-${crypto.randomUUID()}@pbx.example.com`;
    const t0Us = (Date.now() - 90_000) * 1000;
    const udp = await Bun.udpSocket({});
    for (const p of callPackets(callId, t0Us)) udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the call's rows in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1) AS sip, (SELECT count(*) FROM svc_lake.main.hep_proto_5_default WHERE cid = $1) AS rtcp`,
        [callId],
      );
      return Number(r.rows[0]!.sip) === SIP_MESSAGES && Number(r.rows[0]!.rtcp) === 6;
    });

    // An alias, so the ladder names the proxy (set through the API as an operator would).
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const bearer = ((await login.json()) as { token: string }).token;
    const alias = await fetch(`${api}/aliases`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify({ ip: PROXY, name: "sbc-core-1", group: "core", active: true }),
    });
    expect(alias.status).toBe(201);

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
      const page = await context.newPage();
      const consoleErrors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text());
      });
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      const shot = async (p: Page, name: string) => {
        const file = join(shotDir, name);
        await p.screenshot({ path: file });
        expect(statSync(file).size).toBeGreaterThan(5_000);
      };

      // 1. Login page from /auth/providers; a wrong password is refused in words.
      await page.goto(`${base}/`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      const fcp = await page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1);
      console.log(`ui: first contentful paint of the login page ${Math.round(fcp)} ms`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill("not-the-password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page
        .getByRole("alert")
        .filter({ hasText: /password|credentials|invalid/i })
        .waitFor();
      await page.getByLabel("Password").fill(PASSWORD);
      await shot(page, "login.png");
      await page.getByRole("button", { name: "Sign in" }).click();

      // 2. The Home dashboard with its call search, generated from the mapping's fields.
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill(callId);
      await form.getByRole("button", { name: "Search" }).click();
      const results = page.getByRole("table", { name: "Search results" });
      await page.getByText(`${SIP_MESSAGES} messages`).waitFor();
      expect(await results.getByRole("row", { name: /^Open call/ }).count()).toBe(SIP_MESSAGES);
      await shot(page, "dashboard-results.png");

      // 3. The transaction window from a result row (keyboard: focus the row, Enter).
      await results
        .getByRole("row", { name: /^Open call/ })
        .first()
        .focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog");
      await dialog.getByText(`${SIP_MESSAGES} messages`).waitFor();
      const arrows = dialog.getByRole("group", { name: /^Call flow/ }).getByRole("button");
      expect(await arrows.count()).toBe(SIP_MESSAGES);
      const names = await arrows.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
      expect(names.map((n) => n.replace(/^\d+\. /, "").replace(/ from .*$/, ""))).toEqual(EXPECTED_FLOW);
      expect(names.map((n) => Number(n.split(".")[0]))).toEqual(EXPECTED_FLOW.map((_x, i) => i + 1));
      // One port per host: IP columns, the alias under the address (docs/CALL-VIEW.md).
      expect(names[0]).toContain(`from ${CALLER} to ${PROXY} (sbc-core-1)`);
      expect(names[1]).toContain(`from ${PROXY} (sbc-core-1) to ${CALLER}`);
      expect(names[2]).toContain(`from ${PROXY} (sbc-core-1) to ${CALLEE}`);
      await arrows.nth(0).click();
      await dialog.getByRole("table", { name: "Headers" }).getByRole("cell", { name: callId, exact: true }).waitFor();
      await dialog.getByRole("table", { name: "SDP media" }).getByText(/PCMU/).waitFor();
      await shot(page, "ladder.png");
      await dialog.getByRole("tab", { name: "Raw" }).click();
      await dialog
        .getByLabel("Raw message")
        .getByText(/^INVITE sip:2002@example\.net SIP\/2\.0/)
        .waitFor();

      // 4. PCAP export through the browser's download, checked by tshark.
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        dialog.getByRole("button", { name: "Download PCAP" }).first().click(),
      ]);
      const pcap = join(dir.path, "call.pcap");
      await download.saveAs(pcap);
      const ts = Bun.spawnSync(
        [
          "tshark",
          "-r",
          pcap,
          "-T",
          "fields",
          "-E",
          "separator=|",
          "-e",
          "sip.Method",
          "-e",
          "sip.Status-Code",
          "-e",
          "sip.Call-ID",
          "-e",
          "ip.src",
          "-e",
          "ip.dst",
        ],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      // tshark warns on stderr when run as root (CI); only real errors matter.
      expect(ts.stderr.toString().replace(/^Running as user "root".*\n?/m, "")).toBe("");
      expect(ts.exitCode).toBe(0);
      const frames = ts.stdout
        .toString()
        .trim()
        .split("\n")
        .map((l) => l.split("|"));
      expect(frames.map((f) => f[0] || f[1])).toEqual(EXPECTED_FLOW.map((l) => l.split(" ")[0]));
      expect(new Set(frames.map((f) => f[2]))).toEqual(new Set([callId]));
      expect(frames[0]!.slice(3)).toEqual([CALLER, PROXY]);

      // 5. Call info and QoS.
      await dialog.getByRole("tab", { name: "Call info" }).click();
      await dialog.getByRole("status").filter({ hasText: "Completed" }).waitFor();
      await dialog.getByText("4.2 s").first().waitFor(); // setup delay INVITE → 200 OK
      await dialog.getByText("PCMU, PCMA, telephone-event").waitFor(); // offered
      await dialog.getByText("PCMU, telephone-event", { exact: true }).waitFor(); // answered
      await dialog.getByRole("tab", { name: "QoS" }).click();
      const stream = dialog.getByRole("region", { name: `Stream ${CALLER}:40001 to ${CALLEE}:42001` });
      await stream.getByText("Max jitter").waitFor();
      expect(
        await dialog
          .getByRole("img", { name: /^Jitter \(ms\): 0x00009c41 10\.20\.0\.11:40001 → 10\.20\.0\.52:42001: 3 values/ })
          .count(),
      ).toBe(1);
      expect(await dialog.getByRole("region", { name: /^Stream / }).count()).toBe(2);
      await shot(page, "qos.png");
      await dialog.getByRole("tab", { name: "Messages" }).click();
      expect(await dialog.getByRole("table", { name: "Messages" }).getByRole("row").count()).toBe(SIP_MESSAGES + 1);
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // 6. Admin pages.
      await page.getByRole("link", { name: "Users" }).click();
      await page.getByRole("table", { name: "Users" }).getByText("admin").first().waitFor();
      await shot(page, "admin-users.png");
      await page.getByRole("link", { name: "API tokens" }).click();
      await page.getByRole("button", { name: "New token" }).click();
      await page.getByRole("form", { name: "New API token" }).getByLabel("Name").fill("grafana-reader");
      await page.getByRole("button", { name: "Create token" }).click();
      const secret = await page.getByLabel("Token secret").inputValue();
      expect(secret.length).toBeGreaterThan(20);
      await page.getByRole("table", { name: "API tokens" }).getByText("grafana-reader").waitFor();
      await shot(page, "admin-tokens.png");
      // The secret works as an API token, and is not shown again after a reload.
      const asToken = await fetch(`${api}/me`, { headers: { "auth-token": secret } });
      expect(asToken.status).toBe(200);
      await page.reload();
      await page.getByRole("table", { name: "API tokens" }).getByText("grafana-reader").waitFor();
      expect(await page.getByLabel("Token secret").count()).toBe(0);
      await page.getByRole("link", { name: "IP aliases" }).click();
      await page.getByRole("table", { name: "IP aliases" }).getByText("sbc-core-1").waitFor();
      await page.getByRole("link", { name: "Mappings" }).click();
      await page
        .getByRole("table", { name: "Mappings" })
        .getByRole("row", { name: /1 call SIP/ })
        .click();
      const editor = page.getByLabel("Mapping JSON");
      const text = await editor.inputValue();
      // A select without selector: the server's validation error is shown at its line.
      await editor.fill(text.replace('"form_type": "input_multi_select"', '"form_type": "select"'));
      await page.getByRole("button", { name: "Save mapping" }).click();
      await page
        .getByRole("alert")
        .filter({ hasText: /^Line \d+: fields_mapping\.\d+\.selector/ })
        .waitFor();
      await shot(page, "admin-mappings.png");
      await page.getByRole("button", { name: "Revert" }).click();
      await page.getByRole("link", { name: "Settings" }).click();
      await page.getByRole("form", { name: "Transaction window" }).waitFor();
      await shot(page, "settings.png");

      // 7. Dashboards: add a widget, rename, drag a widget; the layout is saved through the API.
      const dashboards = async () => {
        const r = await fetch(`${api}/dashboards?sort=position`, { headers: { authorization: `Bearer ${bearer}` } });
        return (
          (await r.json()) as {
            data: { items: Array<{ name: string; layout: Array<{ id: string; type: string; x: number; y: number }> }> };
          }
        ).data.items;
      };
      await page.getByRole("link", { name: "Dashboards" }).click();
      await page.getByRole("tab", { name: "Smart Search" }).click();
      await page.getByRole("tab", { name: "Smart Search", selected: true }).waitFor();
      // Protocol search: RTCP reports of the call through the same generated form, charted over time.
      await page.getByLabel("Protocol", { exact: true }).selectOption({ label: "RTCP · default (HEP 5)" });
      const rtcpForm = page.getByRole("form", { name: "Search default" });
      await rtcpForm.getByLabel("Correlation ID").fill(callId);
      await rtcpForm.getByRole("button", { name: "Search" }).click();
      await page.getByText("6 messages").waitFor();
      await page.getByRole("img", { name: /^6 events in / }).waitFor();
      await shot(page, "smart-search.png");
      await page.getByLabel("Add widget").selectOption({ label: "Clock" });
      await waitFor("the clock saved on Smart Search", async () =>
        (await dashboards()).find((d) => d.name === "Smart Search")?.layout.some((w) => w.type === "clock"),
      );
      await page.getByRole("button", { name: "Rename" }).click();
      const renameDialog = page.getByRole("dialog", { name: "Rename dashboard" });
      await renameDialog.getByLabel("Name").fill("Protocols");
      await renameDialog.getByRole("button", { name: "OK" }).click();
      await page.getByRole("tab", { name: "Protocols", selected: true }).waitFor();
      await waitFor("the rename saved", async () => (await dashboards()).some((d) => d.name === "Protocols"));
      await page.getByRole("tab", { name: "Home" }).click();
      const clockHead = page.getByRole("region", { name: "Clock" }).getByRole("heading", { name: "Clock" });
      // After the tab switch the grid renders asynchronously: wait for the widget before measuring it.
      await clockHead.waitFor({ state: "visible" });
      const box = await waitFor("the clock widget laid out", () => clockHead.boundingBox());
      await page.mouse.move(box.x + 5, box.y + 5);
      await page.mouse.down();
      await page.mouse.move(box.x - 800, box.y + 5, { steps: 8 });
      await page.mouse.up();
      await waitFor(
        "the dragged clock saved at x 0",
        async () =>
          (await dashboards()).find((d) => d.name === "Home")?.layout.find((w) => w.type === "clock")?.x === 0,
      );

      // 8. Deep link: the search opens with results; then the same at tablet width.
      const link = `${base}/?call_id=${encodeURIComponent(callId)}&from=${Math.floor(t0Us / 1000) - 60_000}&to=${Date.now()}`;
      const opened = performance.now();
      await page.goto(link);
      // The results' count; the call view the link opens says "N messages · 1 Call-ID" too.
      await page
        .getByRole("status")
        .filter({ hasText: `${SIP_MESSAGES} messages` })
        .waitFor();
      console.log(`ui: deep link to a dashboard with results painted in ${Math.round(performance.now() - opened)} ms`);
      expect(await page.getByRole("form", { name: "Search call" }).getByLabel("Call-ID").inputValue()).toBe(callId);
      // The link opens the call view too (docs/DASHBOARD.md "Deep links"); Esc goes back to the dashboard.
      await page.getByRole("dialog", { name: `Call ${callId}` }).waitFor();
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "detached" });
      const tablet = await context.newPage();
      await tablet.setViewportSize({ width: 820, height: 1180 });
      await tablet.goto(link);
      await tablet
        .getByRole("status")
        .filter({ hasText: `${SIP_MESSAGES} messages` })
        .waitFor();
      await tablet.getByRole("dialog", { name: `Call ${callId}` }).waitFor();
      await tablet.keyboard.press("Escape");
      await tablet.getByRole("dialog").waitFor({ state: "detached" });
      await shot(tablet, "tablet-dashboard.png");
      await tablet.close();

      // 9. Logout revokes the session: the same cookie is refused afterwards.
      const cookie = (await context.cookies()).find((c) => c.name === "svc_session");
      expect(cookie?.httpOnly).toBe(true);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      const after = await fetch(`${api}/me`, { headers: { cookie: `svc_session=${cookie!.value}` } });
      expect(after.status).toBe(401);

      expect(consoleErrors.filter((e) => !/401|Unauthorized|status of 4\d\d/.test(e))).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  60_000,
);
