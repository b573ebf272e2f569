/**
 * Shared steps of the game widget browser tests (docs/GAMES.md): an appliance without the lake,
 * users, Chromium pages signed in through the login form with console errors collected, and
 * canvas pixel reads (a drawn frame is not blank).
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { sha256Hex } from "../../src/auth/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { CHROMIUM_ARGS } from "./ui-live-harness.ts";

export const PASSWORD = "games-e2e-password-1";

export interface GamesBrowser extends AsyncDisposable {
  a: TestAppliance;
  browser: Browser;
  consoleErrors: string[];
  /** A new page signed in as `user` (created first unless admin). */
  open(user: string): Promise<Page>;
}

export async function startGamesBrowser(overrides: Record<string, unknown>, dir: string): Promise<GamesBrowser> {
  await buildUi();
  const a = await startTestAppliance(dir, {
    storage: { lakehouse: { enable: false } },
    ...overrides,
    coordinator: {
      auth: { admin_password_hash: sha256Hex(PASSWORD) },
      ...(overrides.coordinator as Record<string, unknown> | undefined),
    },
  });
  const base = a.app.coordinatorUrl!;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  const consoleErrors: string[] = [];
  const login = await fetch(`${base}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const admin = ((await login.json()) as { token: string }).token;
  return {
    a,
    browser,
    consoleErrors,
    async open(user) {
      if (user !== "admin") {
        const r = await fetch(`${base}/api/v4/users`, {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: JSON.stringify({ username: user, password: PASSWORD }),
        });
        if (r.status !== 201) throw new Error(`create ${user}: ${r.status}`);
      }
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.on("pageerror", (e) => consoleErrors.push(`${user}: ${String(e)}`));
      await page.goto(`${base}/`);
      await page.getByLabel("Username").fill(user);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("tablist", { name: "Dashboards" }).getByRole("tab", { selected: true }).waitFor();
      // From here on (the login page's own 401 for "not signed in yet" is expected before).
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(`${user}: ${m.text()}`);
      });
      return page;
    },
    async [Symbol.asyncDispose]() {
      await browser.close();
      await a[Symbol.asyncDispose]();
    },
  };
}

/** Distinct colours among the canvas's pixels (1 = blank), read in the page. */
export async function canvasColours(page: Page, name: string): Promise<number> {
  return await page.getByRole("img", { name }).evaluate((el) => {
    const c = el as HTMLCanvasElement;
    const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < d.length; i += 4) seen.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
    return seen.size;
  });
}
