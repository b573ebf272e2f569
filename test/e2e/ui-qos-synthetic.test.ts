/**
 * The QoS tab of a loadgen call in a real browser (docs/ADMIN.md "QoS", docs/LOADGEN.md "Media
 * and RTCP reports"): loadgen's client and server mirror one call with `send_media_report` to the
 * appliance; the call's QoS tab shows both directions with the G.711 MOS, 0 % loss, and says the
 * reports are synthetic rather than measured.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { Engine } from "../../src/loadgen/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { opts, startUas } from "../integration/loadgen-harness.ts";

const PASSWORD = "ui-qos-synthetic-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

peerTest(
  "QoS tab: a loadgen call's media reports show as synthetic, with their MOS and loss",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-qos-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const hep = { hep_addr: `127.0.0.1:${a.app.ingest!.listeners.udp!.port()}`, send_media_report: true };
    const uas = await startUas({ ...hep, local_ip: "127.0.0.2" });
    let callId = "";
    try {
      const uac = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.2:${uas.binds[0]!.port}`,
          total_calls: 1,
          pause_ms: 200,
          ...hep,
        }),
        mode: "load",
      });
      await uac.start();
      const origSend = uac.legs[0]!.send;
      (uac.legs[0] as { send: typeof origSend }).send = (text, host, port) => {
        callId ||= /\r\nCall-ID: (.+)\r\n/.exec(text)?.[1] ?? "";
        origSend(text, host, port);
      };
      await uac.done;
      await waitFor("the server ended the call", () => uas.snapshot().calls_successful === 1);
    } finally {
      await uas.stop();
    }
    const lake = a.app.lake!;
    await waitFor("the call and its four reports stored", async () => {
      await lake.sync();
      if (!lake.table("main.hep_proto_34_default")) return false;
      const r = await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_34_default WHERE cid = $1", [
        callId,
      ]);
      return Number(r.rows[0]!.n) === 4;
    });

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(`${a.app.coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      const form = page.getByRole("form", { name: "Search call" });
      await form.getByLabel("Call-ID").fill(callId);
      await form.getByRole("button", { name: "Search" }).click();
      // The server's messages are mirrored too: each message twice (client's and server's copy).
      const row = page.getByRole("table", { name: "Search results" }).getByRole("row", { name: /^Open call/ });
      await row.first().waitFor();
      await row.first().focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("tab", { name: "QoS" }).click();
      for (const [from, to] of [
        ["127.0.0.1:6000", "127.0.0.2:30000"],
        ["127.0.0.2:30000", "127.0.0.1:6000"],
      ] as const) {
        const stream = dialog.getByRole("region", { name: `Stream ${from} to ${to}` });
        await stream.getByText("synthetic", { exact: true }).waitFor();
        await stream.getByText(/^synthetic report from a load generator: no RTP was measured/).waitFor();
        await stream.getByText("RTP agent", { exact: true }).waitFor();
        // MOS avg / min of both ends' reports, no loss, no jitter.
        await stream.getByText(/^4\.41\s*\/\s*4\.41$/).waitFor();
        await stream
          .getByRole("definition")
          .filter({ hasText: /^0(\.0+)?\s*%$/ })
          .waitFor();
      }
      expect(await dialog.getByRole("region", { name: /^Stream / }).count()).toBe(2);
    } finally {
      await browser.close();
    }
  },
  90_000,
);
