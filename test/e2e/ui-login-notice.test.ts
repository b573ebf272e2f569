/**
 * The login page's notice in a real browser (docs/UI.md "Login page"): a first visit shows the sign-in form
 * without "Your session has ended" (there was no session), and a session revoked while the page is
 * open does bring that sentence back on the next request.
 */
import { expect } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";

const PASSWORD = "login-notice-password-1";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

peerTest(
  "login page: no 'session has ended' on a first visit; a revoked session says so",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-login-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const base = a.app.coordinatorUrl!;
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      await page.goto(`${base}/`);
      const form = page.getByRole("form", { name: "Sign in" });
      await form.getByLabel("Username").waitFor();
      // The form is complete (methods loaded) and carries no alert at all.
      expect(await page.getByRole("status").filter({ hasText: "Loading sign-in methods" }).count()).toBe(0);
      expect(await page.getByRole("alert").allTextContents()).toEqual([]);

      await form.getByLabel("Username").fill("admin");
      await form.getByLabel("Password").fill(PASSWORD);
      await form.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Sign out" }).waitFor();

      // Revoke this browser's session behind its back, then reload: the next request answers 401.
      const jti = await page.evaluate(() => localStorage.getItem("svc.session.jti"));
      expect(jti).toBeString();
      const login = await fetch(`${base}/api/v4/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: PASSWORD }),
      });
      const bearer = ((await login.json()) as { token: string }).token;
      const revoke = await fetch(`${base}/api/v4/auth/sessions/${encodeURIComponent(jti!)}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(revoke.status).toBeLessThan(300);
      await page.reload();
      await page.getByRole("alert").filter({ hasText: "Your session has ended: sign in again." }).waitFor();
      // The notice can be drawn before the form's sign-in methods are loaded: wait for the field.
      await form.getByLabel("Username").waitFor({ state: "visible" });
      expect(await form.getByLabel("Username").isVisible()).toBe(true);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
