/**
 * The admin pages (docs/ADMIN.md) in a real browser (Debian chromium via playwright-core, appliance in-process):
 * a pcap built here with src/pcap's writer is uploaded through "Import PCAP" and its call found in
 * the dashboard; a file that is not a capture shows the API's 400 message; HEP subscriptions are
 * created, refused when duplicated and deleted; the capture agent that sent HEP is listed; a
 * non-admin sees "admins only"; the tokens page says token access is disabled and how to enable
 * it; an alias with a port is validated and saved; the QoS tab shows units and SSRC in hex.
 * Roles and accessible names only, never CSS internals.
 */
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { writePcap } from "../../src/pcap/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, request, response } from "../fixtures/sip.ts";

const PASSWORD = "ui-admin-password-1";
const VIEWER_PASSWORD = "ui-viewer-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const CAPTURE_ID = 3003;

/** The call of the capture file: phone ↔ proxy, INVITE to 200 OK of the BYE, 7 messages. */
function capture(callId: string, t0Us: number): Uint8Array {
  const p = { callId, from: "1001", to: "2002", fromTag: "pc-1" };
  const A = "10.31.0.11";
  const B = "10.31.0.1";
  const rec = (payload: string, ms: number, src: string, dst: string) => ({
    timestampUs: t0Us + ms * 1000,
    srcIp: src,
    dstIp: dst,
    srcPort: 5060,
    dstPort: 5060,
    payload: new TextEncoder().encode(payload),
  });
  return writePcap([
    rec(invite({ ...p, srcIp: A, mediaPort: 30000 }), 0, A, B),
    rec(response(100, "Trying", "INVITE", p), 20, B, A),
    rec(response(180, "Ringing", "INVITE", { ...p, toTag: "pt" }), 400, B, A),
    rec(response(200, "OK", "INVITE", { ...p, toTag: "pt" }), 3_000, B, A),
    rec(request("ACK", { ...p, toTag: "pt", cseq: 1 }), 3_020, A, B),
    rec(request("BYE", { ...p, toTag: "pt", cseq: 2 }), 9_000, A, B),
    rec(response(200, "OK", "BYE", { ...p, toTag: "pt", cseq: 2 }), 9_030, B, A),
  ]);
}

/** A call sent as HEP by capture agent 3003, with RTCP both ways (PCMU in the SDP: an 8 kHz clock). */
function hepCall(callId: string, t0Us: number): Uint8Array[] {
  const p = { callId, from: "3001", to: "4002", fromTag: "hc-1" };
  const A = "10.32.0.11";
  const B = "10.32.0.52";
  const hep = (
    payload: string,
    ms: number,
    src: string,
    dst: string,
    o: { proto?: number; sport?: number; dport?: number } = {},
  ) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: o.sport ?? 5060,
      dstPort: o.dport ?? 5060,
      timestampUs: t0Us + ms * 1000,
      protoType: o.proto ?? 1,
      captureId: CAPTURE_ID,
      nodeName: "edge-admin",
      correlationId: o.proto === 5 ? callId : undefined,
      payload,
    });
  const rtcp = (ms: number, src: string, dst: string, sport: number, dport: number, jitter: number, fl: number) =>
    hep(
      JSON.stringify({
        type: 200,
        ssrc: sport,
        report_blocks: [{ source_ssrc: dport, fraction_lost: fl, packets_lost: fl, ia_jitter: jitter }],
        mos: 4.3,
      }),
      ms,
      src,
      dst,
      {
        proto: 5,
        sport,
        dport,
      },
    );
  return [
    hep(invite({ ...p, srcIp: A, mediaPort: 40000 }), 0, A, B),
    hep(response(200, "OK", "INVITE", { ...p, toTag: "ht" }), 1_000, B, A),
    hep(request("ACK", { ...p, toTag: "ht", cseq: 1 }), 1_020, A, B),
    rtcp(5_000, A, B, 40001, 42001, 12, 0),
    rtcp(10_000, A, B, 40001, 42001, 31, 64),
    rtcp(15_000, A, B, 40001, 42001, 18, 0),
    rtcp(5_300, B, A, 42001, 40001, 8, 0),
    hep(request("BYE", { ...p, toTag: "ht", cseq: 2 }), 20_000, A, B),
  ];
}

peerTest(
  "admin pages: import a pcap and find its call, HEP subscriptions, agents, admins-only, tokens disabled, alias port, QoS units",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-admin-");
    // Token access is left at its default (disabled).
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const { ingest, lake, coordinatorUrl } = a.app;
    const base = coordinatorUrl!;
    const api = `${base}/api/v4`;
    const login = await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const bearer = {
      authorization: `Bearer ${((await login.json()) as { token: string }).token}`,
      "content-type": "application/json",
    };
    const viewerUser = await fetch(`${api}/users`, {
      method: "POST",
      headers: bearer,
      body: JSON.stringify({ username: "viewer", password: VIEWER_PASSWORD }),
    });
    expect(viewerUser.status).toBe(201);

    const hepCallId = `hep-${crypto.randomUUID()}`;
    const udp = await Bun.udpSocket({});
    for (const p of hepCall(hepCallId, (Date.now() - 120_000) * 1000))
      udp.send(p, ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("the HEP call and its RTCP in the lake", async () => {
      await lake!.sync();
      const r = await lake!.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1) + (SELECT count(*) FROM svc_lake.main.hep_proto_5_default WHERE cid = $1) AS n`,
        [hepCallId],
      );
      return Number(r.rows[0]!.n) === 8;
    });
    const pcapCallId = `pcap-${crypto.randomUUID()}`;
    const pcap = capture(pcapCallId, (Date.now() - 300_000) * 1000);

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const consoleErrors: string[] = [];
      page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      // SVC_UPDATE_SCREENSHOTS=1 writes them to docs/screenshots/ (commit them), as ui-dashboard does.
      const shots =
        process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
      const shot = (p: Page, name: string) => p.screenshot({ path: join(shots, name) });
      const signIn = async (p: Page, user: string, password: string) => {
        await p.goto(`${base}/`);
        await p.getByLabel("Username").fill(user);
        await p.getByLabel("Password").fill(password);
        await p.getByRole("button", { name: "Sign in" }).click();
        await p.getByRole("button", { name: "Sign out" }).waitFor();
      };
      await signIn(page, "admin", PASSWORD);

      // 1. QoS of the HEP call (the dashboard's default range, the last hour): units, axis titles, legend, SSRC in hex.
      await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
      const search = page.getByRole("form", { name: "Search call" });
      const dialog = page.getByRole("dialog");
      await search.getByLabel("Call-ID").fill(hepCallId);
      await search.getByRole("button", { name: "Search" }).click();
      await page.getByText("4 messages").first().waitFor();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: /^Open call/ })
        .first()
        .click();
      await dialog.getByRole("tab", { name: "QoS" }).click();
      const stream = dialog.getByRole("region", { name: "Stream 10.32.0.11:40001 to 10.32.0.52:42001" });
      await stream.getByText("SSRC 0x00009c41").waitFor(); // 40001
      // ia_jitter 31 at the SDP's 8 kHz (PCMU) is 3.875 ms; fraction lost 64/256 is 25 %.
      expect(await stream.getByRole("definition").allInnerTexts()).toEqual([
        "3",
        "3.88 ms",
        "25.0 %",
        "64",
        "4.30 / 4.30",
      ]);
      await stream.getByText("jitter converted at the SDP codec's 8 kHz clock").waitFor();
      const jitter = dialog.getByRole("img", { name: /^Jitter \(ms\): / });
      expect(await jitter.getAttribute("aria-label")).toBe(
        "Jitter (ms): 0x00009c41 10.32.0.11:40001 → 10.32.0.52:42001: 3 values, max 3.88 ms; 0x0000a411 10.32.0.52:42001 → 10.32.0.11:40001: 1 values, max 1.00 ms",
      );
      expect(await dialog.getByRole("img", { name: /^Packet loss \(%\): .*max 25\.0 %/ }).count()).toBe(1);
      expect(await dialog.getByRole("img", { name: /^MOS \(1-5\): / }).count()).toBe(1);
      expect(await dialog.getByRole("list", { name: "Jitter legend" }).getByRole("listitem").allInnerTexts()).toEqual([
        "0x00009c41 10.32.0.11:40001 → 10.32.0.52:42001",
        "0x0000a411 10.32.0.52:42001 → 10.32.0.11:40001",
      ]);
      await shot(page, "qos-units.png");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // 2. Import PCAP: a text file is refused with the API's own words, then the capture imports.
      await page.getByRole("link", { name: "Import PCAP" }).click();
      const form = page.getByRole("form", { name: "Import PCAP" });
      const fileInput = form.getByLabel("Capture file (.pcap, .pcapng)");
      await fileInput.setInputFiles({
        name: "notes.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("this is not a capture\n"),
      });
      await form.getByRole("button", { name: "Import" }).click();
      await page
        .getByRole("alert")
        .filter({ hasText: "Import failed: file: notes.txt is not a pcap or pcapng capture (unknown magic number)" })
        .waitFor();
      await fileInput.setInputFiles({
        name: "call.pcap",
        mimeType: "application/vnd.tcpdump.pcap",
        buffer: Buffer.from(pcap),
      });
      await form.getByRole("button", { name: "Import" }).click();
      const result = page.getByRole("region", { name: "Import result" });
      await result.getByText("imported 7 of 7 SIP messages from call.pcap").waitFor();
      expect(await result.getByText("hep_proto_1_call 7", { exact: true }).count()).toBe(1);
      expect(await result.getByText("udp 7", { exact: true }).count()).toBe(1);
      expect(await page.getByRole("alert").count()).toBe(0);
      await shot(page, "import.png");
      // The imported call is found in the dashboard at the capture's times.
      await result.getByRole("button", { name: "Show these times in the dashboard" }).click();
      await search.getByLabel("Call-ID").fill(pcapCallId);
      await search.getByRole("button", { name: "Search" }).click();
      await page.getByText("7 messages").first().waitFor();
      const rows = page.getByRole("table", { name: "Search results" }).getByRole("row", { name: /^Open call/ });
      expect(await rows.count()).toBe(7);
      await rows.first().focus();
      await page.keyboard.press("Enter");
      await dialog.getByText("7 messages").waitFor();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // 3. HEP subscriptions: create, a duplicate is refused (409 in words), delete.
      await page.getByRole("link", { name: "HEP subscriptions" }).click();
      await page.getByText("No HEP subscriptions yet.").waitFor();
      const newSub = async (mapping: string) => {
        await page.getByRole("button", { name: "New subscription" }).click();
        const f = page.getByRole("form", { name: "New HEP subscription" });
        await f.getByLabel("HEP type").fill("5");
        await f.getByLabel("Profile").fill("default");
        await f.getByLabel("Label").fill("RTCP");
        await f.getByLabel("Mapping (JSON object)").fill(mapping);
        await f.getByRole("button", { name: "Save subscription" }).click();
        return f;
      };
      const bad = await newSub("{not json");
      await bad
        .getByRole("alert")
        .filter({ hasText: /^Mapping: not valid JSON/ })
        .waitFor();
      await page.keyboard.press("Escape");
      await bad.waitFor({ state: "detached" });
      await newSub('{"correlation": "cid"}');
      const subs = page.getByRole("table", { name: "HEP subscriptions" });
      await subs.getByRole("row", { name: /^5 default RTCP 1 correlation/ }).waitFor();
      const dup = await newSub("{}");
      await dup
        .getByRole("alert")
        .filter({ hasText: 'a HEP subscription for hepid 5 profile "default" already exists' })
        .waitFor();
      await dup.getByRole("button", { name: "Cancel" }).click();
      await shot(page, "hepsubs.png");
      page.once("dialog", (d) => void d.accept());
      await subs.getByRole("button", { name: "Delete 5 default" }).click();
      await page.getByText("No HEP subscriptions yet.").waitFor();
      expect(
        ((await (await fetch(`${api}/hepsubs`, { headers: bearer })).json()) as { data: { items: unknown[] } }).data
          .items,
      ).toEqual([]);

      // 4. Capture agents: the agent that sent the HEP call (recorded every 10 s).
      await page.getByRole("link", { name: "Agents" }).click();
      const agents = page.getByRole("table", { name: "Capture agents" });
      await waitFor(
        "the capture agent listed",
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return (
            (await agents
              .getByRole("row", { name: new RegExp(`^${CAPTURE_ID} edge-admin 127\\.0\\.0\\.1 `) })
              .count()) === 1
          );
        },
        20_000,
        500,
      );
      expect(
        await agents
          .getByRole("row", { name: new RegExp(`^${CAPTURE_ID} `) })
          .getByRole("cell")
          .nth(5)
          .innerText(),
      ).toBe("8");
      await shot(page, "agents.png");

      // 5. Tokens page with token access disabled: the sentence from the API, key and file named.
      await page.getByRole("link", { name: "API tokens" }).click();
      const notice = page.getByRole("alert").filter({ hasText: "API token access is disabled on this server" });
      expect(await notice.innerText()).toBe(
        "API token access is disabled on this server. To enable it set coordinator.api_settings.enable_token_access = true in the configuration file (/etc/svc/svc.json on an installed appliance, or the file given with --config-path) or set SVC_COORDINATOR_API_SETTINGS_ENABLE_TOKEN_ACCESS=true, then restart svc. Tokens created now are refused until then.",
      );
      await shot(page, "tokens-disabled.png");

      // 6. IP alias with a port: a bad port is refused before sending, a good one is listed.
      await page.getByRole("link", { name: "IP aliases" }).click();
      await page.getByRole("button", { name: "New alias" }).click();
      const aliasForm = page.getByRole("form", { name: "New alias" });
      await aliasForm.getByLabel("Address or CIDR").fill("10.31.0.1");
      await aliasForm.getByLabel("Name").fill("proxy-sip");
      await aliasForm.getByLabel("Port (optional)").fill("70000");
      await aliasForm.getByRole("button", { name: "Save alias" }).click();
      await aliasForm
        .getByRole("alert")
        .filter({ hasText: "Port: a whole number from 1 to 65535, or empty for every port" })
        .waitFor();
      await aliasForm.getByLabel("Port (optional)").fill("5060");
      await aliasForm.getByLabel("Capture ID (optional)").fill("3003");
      await aliasForm.getByRole("button", { name: "Save alias" }).click();
      await page
        .getByRole("table", { name: "IP aliases" })
        .getByRole("row", { name: "proxy-sip 10.31.0.1 5060 3003 — yes Edit proxy-sip Delete proxy-sip" })
        .waitFor();

      // 7. A non-admin: no admin links, and the pages say admins only.
      const viewer = await context.browser()!.newContext({ viewport: { width: 1280, height: 800 } });
      const vp = await viewer.newPage();
      await signIn(vp, "viewer", VIEWER_PASSWORD);
      expect(await vp.getByRole("link", { name: "HEP subscriptions" }).count()).toBe(0);
      expect(await vp.getByRole("link", { name: "Agents" }).count()).toBe(0);
      for (const [route, title] of [
        ["hepsubs", "HEP subscriptions"],
        ["agents", "Capture agents"],
      ] as const) {
        await vp.goto(`${base}/#/admin/${route}`);
        await vp.getByRole("heading", { name: title }).waitFor();
        await vp
          .getByRole("alert")
          .filter({ hasText: `Admins only: ${title.toLowerCase()} are managed by administrators.` })
          .waitFor();
        expect(await vp.getByRole("table").count()).toBe(0);
      }
      await viewer.close();

      expect(consoleErrors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  90_000,
);
