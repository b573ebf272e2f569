/**
 * Shared steps of the live-stream browser tests (docs/STREAM.md "In the dashboard", docs/CALL-VIEW.md
 * "Live"): Chromium's flags, signing in through the login form, and restarting the appliance on
 * the same coordinator port, which closes every stream client with 1001 (the server goes away):
 * the browser's reconnect, and the gap it shows, without touching the page.
 */
import type { Page } from "playwright-core";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export async function signIn(page: Page, a: TestAppliance, password: string): Promise<void> {
  await page.goto(`${a.app.coordinatorUrl}/`);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
}

/**
 * Stops `a` and starts it again from the same directory (lake, settings, JWT secret) on the same
 * coordinator port, so the page's origin and session stay valid. Other listeners get new ports.
 */
export async function restartOnSamePort(
  a: TestAppliance,
  dir: string,
  overrides: { coordinator?: Record<string, unknown> } & Record<string, unknown>,
): Promise<TestAppliance> {
  const listen = new URL(a.app.coordinatorUrl!).host;
  await a[Symbol.asyncDispose]();
  return await startTestAppliance(dir, {
    ...overrides,
    coordinator: { ...overrides.coordinator, http_server: { listen } },
  });
}
