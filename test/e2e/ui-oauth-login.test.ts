/**
 * Single sign-on in a real browser (docs/AUTH.md "OAuth 2.0", "The login page"): Debian
 * chromium against the appliance and npm oidc-provider on loopback. The login page lists the
 * provider button (with its image) and the password form by position; clicking the button, logging
 * in and consenting at the provider lands back signed in with the photo in the top bar. A failed
 * callback is shown in words; `auto_redirect` goes to the provider on page load only, never after
 * a sign-out or an error. Screenshots go to docs/screenshots/ with SVC_UPDATE_SCREENSHOTS=1 (else a
 * temp dir).
 */
import { expect } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startIdp, type Idp } from "../integration/oauth2-harness.ts";

const PASSWORD = "oauth-ui-password-1";
const ROOT = resolve(import.meta.dir, "../..");
const LONG_NAME = "Contoso Corporation Entra ID (production tenant, EMEA)";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

async function newContext(browser: Browser): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // The provider's development pages import a web font; the test machine is offline.
  await ctx.route(/fonts\.googleapis\.com/, (r) => r.abort());
  return ctx;
}

/** The provider's development login (every password is accepted) and consent pages. */
async function loginAtProvider(page: Page, idp: Idp, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await page.getByPlaceholder(/^Enter \w+ login$/).fill(login);
  await page.getByPlaceholder("and password").fill("whatever");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

const naturalWidth = (page: Page, name: string) =>
  page
    .getByRole("img", { name })
    .evaluate((img) => ((img as HTMLImageElement).complete ? (img as HTMLImageElement).naturalWidth : -1));

peerTest(
  "single sign-on in the browser: provider button by position, login at the provider, photo in the top bar, errors in words",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using idp = await startIdp();
    await using dir = tempDir("svc-ui-oauth-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: {
        auth: { admin_password_hash: sha256Hex(PASSWORD), internal_position: 1 },
        oauth2_provider: idp.providerConfig("confidential", { position: 0, provider_image: idp.logoUrl }),
      },
      storage: { lakehouse: { enable: false } },
    });
    const base = a.app.coordinatorUrl!;
    idp.forwardTo(base);
    const shotDir =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? join(ROOT, "docs", "screenshots") : join(dir.path, "shots");
    mkdirSync(shotDir, { recursive: true });
    const shot = async (p: Page, name: string) => {
      const file = join(shotDir, `${name}.png`);
      await p.screenshot({ path: file });
      expect(statSync(file).size).toBeGreaterThan(5_000);
    };
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await newContext(browser)).newPage();
      await page.goto(`${base}/`);
      const form = page.getByRole("form", { name: "Sign in" });
      const sso = form.getByRole("link", { name: "Sign in with Corp SSO" });
      await sso.waitFor();
      // Position 0 (the provider) above position 1 (the password form); the button's image loaded (CSP allows its origin).
      const [button, field] = [await sso.boundingBox(), await form.getByLabel("Username").boundingBox()];
      expect(button!.y + button!.height).toBeLessThan(field!.y);
      expect(await sso.locator("img").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(2);
      expect(await page.getByRole("alert").allTextContents()).toEqual([]);
      await shot(page, "login-sso");

      await sso.click();
      await loginAtProvider(page, idp, "alice");
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(new URL(page.url()).search).toBe(""); // the one-time token is gone from the address bar
      await page.getByRole("img", { name: "Profile photo of alice" }).waitFor();
      expect(await naturalWidth(page, "Profile photo of alice")).toBe(2);
      expect(await page.getByRole("banner").getByText("admin", { exact: true }).count()).toBe(1); // voip-admins group
      await shot(page, "topbar-avatar");

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("alert").filter({ hasText: "You are signed out." }).waitFor();

      // A forged callback: 400, forwarded to the login page, which says why in words.
      await page.goto(`${base}/api/v4/auth/oauth2/corp/callback?state=forged&code=abc`);
      await page
        .getByRole("alert")
        .filter({
          hasText:
            "Single sign-on failed: the sign-in request is unknown, expired or was already used (state mismatch): start the sign-in again",
        })
        .waitFor();
      expect(new URL(page.url()).search).toBe("");
      await shot(page, "login-sso-error");
    } finally {
      await browser.close();
    }
  },
  120_000,
);

peerTest(
  "auto_redirect: on page load only, not after sign-out or a failed sign-on; a user without a photo gets initials",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using idp = await startIdp();
    await using dir = tempDir("svc-ui-oauth-auto-");
    await using a = await startTestAppliance(dir.path, {
      coordinator: {
        auth: { admin_password_hash: sha256Hex(PASSWORD) },
        oauth2_provider: idp.providerConfig("public", {
          auto_redirect: true,
          provider_name: LONG_NAME,
          provider_image: idp.logoUrl,
        }),
      },
      storage: { lakehouse: { enable: false } },
    });
    const base = a.app.coordinatorUrl!;
    idp.forwardTo(base);
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await newContext(browser)).newPage();
      await page.goto(`${base}/`);
      await loginAtProvider(page, idp, "bob"); // sent there without a click
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.getByRole("img", { name: "Initials of bob_corp.example" }).textContent()).toBe("BB");

      await page.getByRole("button", { name: "Sign out" }).click();
      const form = page.getByRole("form", { name: "Sign in" });
      const sso = form.getByRole("link", { name: `Sign in with ${LONG_NAME}` });
      await sso.waitFor();
      // A long provider name wraps inside the button instead of running out of the card.
      const fits = await sso.evaluate(
        (a) =>
          a.scrollWidth <= a.clientWidth &&
          a.getBoundingClientRect().right <= a.closest("form")!.getBoundingClientRect().right,
      );
      expect(fits).toBe(true);
      // The methods are loaded and no redirect was started (the page says so before it navigates).
      expect(await page.getByRole("status").filter({ hasText: "Redirecting" }).count()).toBe(0);
      expect(page.url().startsWith(base)).toBe(true);

      // A failed sign-on is a page load too, but it must not send the user straight back.
      await page.goto(`${base}/api/v4/auth/oauth2/corp/callback?state=forged&code=abc`);
      await page.getByRole("alert").filter({ hasText: "Single sign-on failed:" }).waitFor();
      await sso.waitFor();
      expect(await page.getByRole("status").filter({ hasText: "Redirecting" }).count()).toBe(0);
      expect(page.url().startsWith(base)).toBe(true);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
