/**
 * The first-login password dialog in a real browser (docs/AUTH.md "First login: change the
 * generated password"): after signing in with the bootstrap's generated password a labelled modal
 * dialog asks for a new one; Esc does not close it and Tab stays inside; the change signs in again
 * by itself, so the dashboard carries on (no login page) and the next page load asks no more. With
 * coordinator.auth.require_first_password_change=false the dialog has a Later button.
 */
import { expect } from "bun:test";
import { resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import type { FirstRunAdmin } from "../../src/auth/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { startAppliance } from "../../src/main.ts";
import { buildUi } from "../../ui/build.ts";
import { testConfig } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const NEW_PASSWORD = "my-own-admin-pw-1";

async function start(dir: string, require: boolean) {
  let admin: FirstRunAdmin | undefined;
  const app = await startAppliance(
    testConfig(dir, {
      coordinator: { auth: { admin_password_hash: "", require_first_password_change: require } },
      storage: { lakehouse: { enable: false } },
    }),
    createLogger({ test: true }),
    { onFirstRunAdmin: (a) => (admin = a) },
  );
  return {
    app,
    admin: admin!,
    base: app.coordinatorUrl!,
    async [Symbol.asyncDispose]() {
      await app.stop();
    },
  };
}

async function signIn(page: Page, base: string, password: string) {
  await page.goto(`${base}/`);
  const form = page.getByRole("form", { name: "Sign in" });
  await form.getByLabel("Username").fill("admin");
  await form.getByLabel("Password").fill(password);
  await form.getByRole("button", { name: "Sign in" }).click();
}

peerTest(
  "first login: the generated password must be changed in a modal dialog; the page signs in again by itself",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-first-pw-");
    await using a = await start(dir.path, true);
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await signIn(page, a.base, a.admin.password);
      const dialog = page.getByRole("dialog", { name: "Change the generated password" });
      await dialog.waitFor();
      expect(await dialog.getAttribute("aria-modal")).toBe("true");
      expect(await dialog.getByRole("button", { name: "Later" }).count()).toBe(0);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("first-pw-current");
      if (process.env.SVC_UPDATE_SCREENSHOTS === "1")
        await page.screenshot({ path: resolve(import.meta.dir, "../../docs/screenshots/first-password.png") });

      // Esc does not dismiss it; Tab from the last control wraps to the first, Shift+Tab back.
      await page.keyboard.press("Escape");
      expect(await dialog.isVisible()).toBe(true);
      await page.keyboard.press("Shift+Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Change password");
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("first-pw-current");
      for (let i = 0; i < 6; i++) await page.keyboard.press("Tab");
      expect(
        await page.evaluate(() => document.querySelector('[role="dialog"]')!.contains(document.activeElement)),
      ).toBe(true);

      // A wrong confirmation is refused in the dialog.
      await dialog.getByLabel("Current password").fill(a.admin.password);
      await dialog.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
      await dialog.getByLabel("Confirm new password").fill(`${NEW_PASSWORD}x`);
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.getByRole("alert").filter({ hasText: "differ" }).waitFor();

      await dialog.getByLabel("Confirm new password").fill(NEW_PASSWORD);
      await dialog.getByRole("button", { name: "Change password" }).click();
      await dialog.waitFor({ state: "detached" });
      // Still signed in, on the dashboard: the old session ended, the dialog opened a new one.
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.getByRole("form", { name: "Sign in" }).count()).toBe(0);
      await page.reload();
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.getByRole("dialog").count()).toBe(0);
      const login = await fetch(`${a.base}/api/v4/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: NEW_PASSWORD }),
      });
      expect(login.status).toBe(201);
    } finally {
      await browser.close();
    }
  },
  180_000,
);

peerTest(
  "first login: require_first_password_change=false offers Later, and Esc closes the dialog",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-first-pw-later-");
    await using a = await start(dir.path, false);
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await signIn(page, a.base, a.admin.password);
      const dialog = page.getByRole("dialog", { name: "Change the generated password" });
      await dialog.getByRole("button", { name: "Later" }).click();
      await dialog.waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn(page, a.base, a.admin.password);
      await dialog.waitFor();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
    } finally {
      await browser.close();
    }
  },
  180_000,
);
