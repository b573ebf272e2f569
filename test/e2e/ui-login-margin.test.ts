/**
 * The login card is never flush against the top of the page (docs/UI.md "Login page"): at a desktop,
 * a short and a phone-sized window it keeps at least 16 px above it and beside it.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

peerTest(
  "login card: a margin above and beside it at 1280x800, 1280x480 and 390x700",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-login-margin-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex("login-margin-pw-1") } },
      storage: { lakehouse: { enable: false } },
    });
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 1280, height: 480 },
        { width: 390, height: 700 },
      ]) {
        const page = await (await browser.newContext({ viewport })).newPage();
        await page.goto(`${a.app.coordinatorUrl}/`);
        const card = page.getByRole("form", { name: "Sign in" });
        await card.getByLabel("Username").waitFor();
        const box = (await card.boundingBox())!;
        expect({
          viewport,
          top: box.y >= 16,
          left: box.x >= 16,
          right: box.x + box.width <= viewport.width - 16,
        }).toEqual({ viewport, top: true, left: true, right: true });
      }
    } finally {
      await browser.close();
    }
  },
  120_000,
);
