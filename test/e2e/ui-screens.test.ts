/**
 * The screens changed for the dashboard's habits (docs/UI.md), photographed: Quality, the new
 * dashboard dialog, the time picker's 24 h From/To, Settings in minutes, an alias error, two calls'
 * ladder, the call search at 390 px and the login page in a short window. Each picture must be a real page (over
 * 5 kB). With SVC_UPDATE_SCREENSHOTS=1 they are written to docs/screenshots/ (see its README).
 */
import { expect } from "bun:test";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "screens of the dashboard's habits render (docs/screenshots with SVC_UPDATE_SCREENSHOTS=1)",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-screens-");
    const out =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
    const a = "7f3a91c2@pbx-east";
    const b = "c0ffee77-b2b-1@sbc-west";
    await using h = await startHabits(dir.path, {
      calls: { [a]: ["10.70.0.11", "10.70.0.1"], [b]: ["10.70.0.12", "10.70.0.2"] },
      viewport: { width: 1100, height: 700 },
    });
    const { page, base } = h;
    const shot = async (name: string) => {
      const file = join(out, name);
      await page.screenshot({ path: file });
      expect(statSync(file).size).toBeGreaterThan(5_000);
    };
    await page.getByRole("tab", { name: "Quality" }).click();
    await page.getByRole("img", { name: /^ASR 100/ }).waitFor();
    await shot("quality.png");
    await page.getByRole("button", { name: "+ New" }).click();
    await page.getByRole("dialog", { name: "New dashboard" }).waitFor();
    await shot("name-dialog.png");
    await page.keyboard.press("Escape");
    await page.getByRole("tab", { name: "Home" }).click();
    await page.getByRole("button", { name: /^Dashboard time range/ }).click();
    await page.getByLabel("From", { exact: true }).waitFor();
    await shot("time-picker-24h.png");
    await page.keyboard.press("Escape");
    await page.goto(`${base}/#/settings`);
    await page.getByRole("form", { name: "Transaction window" }).waitFor();
    await shot("settings.png");
    await page.goto(`${base}/#/admin/aliases`);
    await page.getByRole("button", { name: "New alias" }).click();
    const form = page.getByRole("form", { name: "New alias" });
    await form.getByLabel("Address or CIDR").fill("127.0.0.1/33");
    await form.getByLabel("Name").fill("loopback");
    await form.getByRole("button", { name: "Save" }).click();
    await form.getByRole("alert").waitFor();
    await shot("alias-error.png");
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto(`${base}/?call_id=${encodeURIComponent(`${a};${b}`)}`);
    await page.getByRole("dialog", { name: "2 calls together" }).getByRole("list", { name: "Endpoints" }).waitFor();
    await shot("ladder-two-calls.png");
    await page.keyboard.press("Escape");
    await page.setViewportSize({ width: 390, height: 760 });
    await page.goto(`${base}/`);
    await page
      .getByRole("form", { name: "Search call" })
      .getByRole("button", { name: "Search", exact: true })
      .waitFor();
    await shot("narrow-search.png");
    // A short window: the login card keeps its margin above (login.png of ui-dashboard is 1280×800).
    await page.setViewportSize({ width: 1100, height: 480 });
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("form", { name: "Sign in" }).getByLabel("Username").waitFor();
    await shot("login-short.png");
    expect(h.errors).toEqual([]);
  },
  180_000,
);
