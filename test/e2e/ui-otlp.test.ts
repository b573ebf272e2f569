/**
 * The call view's OpenTelemetry tab in a real browser (docs/OTLP.md "Linking to calls"): a SIP call
 * over HEP and spans and logs from the official OpenTelemetry exporters that carry its Call-ID as
 * `sip.call_id`. The tab lists them whole (nothing cut), a row shows its attributes, a call without
 * such data says so, Esc closes the window.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { invite, response } from "../fixtures/sip.ts";
import { sendAll } from "../integration/otlp-helpers.ts";

const PASSWORD = "ui-otlp-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

peerTest(
  "call view: the OpenTelemetry tab lists the spans and log records carrying the Call-ID",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-otlp-");
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true } },
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const sent = await sendAll("http-proto", a.app.otlp!.httpUrl()!, a.app.otlp!.grpcAddress()!);
    // A long log body (OTLP/JSON): it must wrap in the tab, never be cut.
    const LONG = Array.from({ length: 30 }, (_v, i) => `hop-${i}:gateway-timeout`).join(" ");
    const nowNs = String(BigInt(Date.now()) * 1_000_000n + 5_000_000n);
    const longLog = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: sent.service } }] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: nowNs,
                  severityNumber: 13,
                  severityText: "WARN",
                  body: { stringValue: LONG },
                  attributes: [{ key: "sip.call_id", value: { stringValue: sent.callId } }],
                },
              ],
            },
          ],
        },
      ],
    };
    expect(
      (
        await fetch(`${a.app.otlp!.httpUrl()}/v1/logs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(longLog),
        })
      ).status,
    ).toBe(200);
    const bare = `no-otel-${crypto.randomUUID()}@pbx`;
    const udp = await Bun.udpSocket({});
    const t0 = Date.now() * 1000;
    const hep = (payload: string, i: number) =>
      encodeHep3({
        srcIp: "10.30.0.1",
        dstIp: "10.30.0.2",
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: t0 + i * 1000,
        protoType: 1,
        captureId: 11,
        payload,
      });
    for (const [i, id] of [sent.callId, bare].entries()) {
      const p = { callId: id, from: "1001", to: "2002", fromTag: "f" };
      udp.send(hep(invite(p), i * 10), a.app.ingest!.listeners.udp!.port(), "127.0.0.1");
      udp.send(
        hep(response(200, "OK", "INVITE", { ...p, toTag: "t" }), i * 10 + 1),
        a.app.ingest!.listeners.udp!.port(),
        "127.0.0.1",
      );
    }
    udp.close();
    await waitFor("both calls stored", async () => {
      await a.app.lake!.sync();
      return (
        Number(
          (
            await a.app.lake!.query(
              "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id IN ($1, $2)",
              [sent.callId, bare],
            )
          ).rows[0]!.n,
        ) === 4
      );
    });

    const browser: Browser = await chromium.launch({
      executablePath: Bun.which("chromium") ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(String(e)));
      await page.goto(`${a.app.coordinatorUrl}/`);
      await page.getByLabel("Username").fill("admin");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      const form = page.getByRole("form", { name: "Search call" });
      const open = async (callId: string) => {
        await form.getByLabel("Call-ID").fill(callId);
        await form.getByRole("button", { name: "Search" }).click();
        await page.getByText("2 messages").first().waitFor();
        await page
          .getByRole("table", { name: "Search results" })
          .getByRole("row", { name: /^Open call/ })
          .first()
          .click();
        const dialog = page.getByRole("dialog");
        await dialog.getByText("2 messages").waitFor();
        await dialog.getByRole("tab", { name: "OpenTelemetry" }).click();
        return dialog;
      };

      const dialog = await open(sent.callId);
      const table = dialog.getByRole("table", { name: "OpenTelemetry spans and logs" });
      await table.waitFor();
      const rows = table.getByRole("row");
      expect(await rows.count()).toBe(4); // header, the INVITE span, the two log records
      const span = rows.nth(1);
      const log = rows.nth(2);
      expect(await span.getByRole("cell").allInnerTexts()).toEqual([
        expect.stringMatching(/\d\d:\d\d:\d\d\.\d{3}/),
        "Span",
        sent.service,
        "INVITE",
        expect.stringMatching(/^unset · [\d.]+ (µs|ms|s)$/),
        sent.traceId,
      ]);
      expect((await log.getByRole("cell").allInnerTexts()).slice(1)).toEqual([
        "Log",
        sent.service,
        `call ${sent.callId} failed: 503`,
        "ERROR",
        sent.traceId,
      ]);
      expect((await rows.nth(3).getByRole("cell").allInnerTexts()).slice(1)).toEqual([
        "Log",
        sent.service,
        LONG,
        "WARN",
        "",
      ]);
      // Nothing cut: every cell shows its whole text.
      for (const cell of await table.getByRole("cell").all())
        expect(await cell.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
      // A row opens its attributes; again closes them.
      await span.click();
      await expect(table.getByLabel("Attributes").innerText()).resolves.toContain(`"sip.call_id": "${sent.callId}"`);
      await span.press("Enter");
      await table.getByLabel("Attributes").waitFor({ state: "detached" });
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // From the other side: OTLP Traces in the search form, the INVITE span's row opens its SIP call.
      await page.getByRole("link", { name: "Dashboards" }).click();
      await page.getByRole("tab", { name: "Smart Search" }).click();
      await page.getByLabel("Protocol", { exact: true }).selectOption({ label: "OTLP Traces · default (HEP 200)" });
      const otlpForm = page.getByRole("form", { name: "Search default" });
      await otlpForm.getByLabel("Trace ID").fill(sent.traceId);
      await otlpForm.getByRole("button", { name: "Search" }).click();
      const spanRow = page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: `Open call ${sent.callId}` });
      await spanRow.waitFor();
      expect(
        await page
          .getByRole("table", { name: "Search results" })
          .getByRole("row", { name: /^Open call/ })
          .count(),
      ).toBe(2); // the span and its child
      await spanRow.click();
      const fromSpan = page.getByRole("dialog");
      await fromSpan.getByText("2 messages").waitFor();
      await fromSpan.getByRole("heading", { name: `Call ${sent.callId}` }).waitFor();
      await page.keyboard.press("Escape");
      await fromSpan.waitFor({ state: "detached" });

      await page.getByLabel("Protocol", { exact: true }).selectOption({ label: "SIP · call (HEP 1)" });
      const other = await open(bare);
      await other.getByText("No OpenTelemetry span or log record carries this call's Call-ID").waitFor();
      await page.keyboard.press("Escape");
      await other.waitFor({ state: "detached" });
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  90_000,
);
