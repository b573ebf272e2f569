/**
 * Nothing clipped, Esc closes what opened (docs/UI.md "Top bar", "Forms and dialogs"), in
 * Chromium: every page link of the top bar is shown whole at 1280, 800 and 400 px (at 400 behind
 * "Menu", a popover); the Users, API tokens, IP aliases and HEP subscriptions forms close on Esc
 * with focus back on the button that opened them; the call window's heading shows the whole
 * Call-ID at 400 px (wrapped, and on hover), and result cells carry their whole value on hover.
 * With SVC_UPDATE_SCREENSHOTS=1: docs/screenshots/narrow-menu.png and narrow-call.png.
 */
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import type { Locator, Page } from "playwright-core";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { expectFullyShown, isFocused, openBrowser, setUp } from "./ui-time-harness.ts";

const PAGES = [
  "Dashboards",
  "Users",
  "API tokens",
  "IP aliases",
  "Mappings",
  "HEP subscriptions",
  "Agents",
  "Import PCAP",
  "Settings",
];

/** The element lies inside the viewport, shows all its content (no cut) and nothing covers its centre. */
async function expectWhole(page: Page, l: Locator) {
  const vp = page.viewportSize()!;
  const r = await l.evaluate((el) => {
    const b = el.getBoundingClientRect();
    const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
    return {
      text: el.textContent,
      left: b.left,
      right: b.right,
      cut: el.scrollWidth > el.clientWidth + 1,
      covered: !hit || !(el.contains(hit) || hit.contains(el)),
    };
  });
  expect(r).toEqual({ text: r.text, left: r.left, right: r.right, cut: false, covered: false });
  expect(r.left >= 0 && r.right <= vp.width + 0.5).toBe(true);
}

peerTest(
  "narrow screens: top bar links whole at 1280/800/400 px (a Menu at 400), admin forms close on Esc, the call heading is never cut",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-narrow-");
    const { appliance, base } = await setUp(dir.path);
    await using _a = appliance;
    const { browser, page, errors } = await openBrowser(base);
    const shots =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
    try {
      const nav = page.getByRole("navigation", { name: "Main" });

      // 1. The top bar: every link shown whole, in the bar at 1280 and 800 px (wrapped there).
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 700 });
        expect(await nav.getByRole("link").allInnerTexts()).toEqual(PAGES);
        for (const name of PAGES) await expectWhole(page, nav.getByRole("link", { name, exact: true }));
      }
      // At 400 px the links fold into "Menu"; its list is a popover shown whole, closed by Esc.
      await page.setViewportSize({ width: 400, height: 700 });
      expect(await nav.getByRole("link").count()).toBe(0);
      const menuButton = nav.getByRole("button", { name: /^Menu/ });
      await expectWhole(page, menuButton);
      await menuButton.click();
      const menu = page.getByRole("menu", { name: "Pages" });
      expect(await menu.getByRole("menuitem").allInnerTexts()).toEqual(PAGES);
      await expectFullyShown(page, menu);
      await page.screenshot({ path: join(shots, "narrow-menu.png") });
      for (const name of PAGES) await expectWhole(page, menu.getByRole("menuitem", { name, exact: true }));
      await page.keyboard.press("Escape");
      await menu.waitFor({ state: "detached" });
      expect(await isFocused(menuButton)).toBe(true);
      // Keyboard: ArrowDown opens it on the first page, End goes to the last, Enter follows the link.
      await page.keyboard.press("ArrowDown");
      await menu.waitFor();
      await page.keyboard.press("End");
      await page.keyboard.press("Enter");
      await page.getByRole("form", { name: "Transaction window" }).waitFor();
      await menu.waitFor({ state: "detached" });
      expect(await menuButton.innerText()).toContain("Settings");

      // 2. Admin forms close on Esc; focus goes back to the button that opened them.
      await page.setViewportSize({ width: 1280, height: 800 });
      const escCloses = async (link: string, opener: Locator, form: Locator) => {
        await nav.getByRole("link", { name: link, exact: true }).click();
        await opener.click();
        await form.waitFor();
        // Focus moved into the form, so typing goes to its first field.
        expect(await form.evaluate((f) => f.contains(document.activeElement))).toBe(true);
        await page.keyboard.press("Escape");
        await form.waitFor({ state: "detached" });
        expect(await isFocused(opener)).toBe(true);
      };
      await escCloses(
        "Users",
        page.getByRole("button", { name: "New user" }),
        page.getByRole("form", { name: "New user" }),
      );
      await escCloses(
        "Users",
        page.getByRole("button", { name: "Edit admin" }),
        page.getByRole("form", { name: "Edit user" }),
      );
      await escCloses(
        "API tokens",
        page.getByRole("button", { name: "New token" }),
        page.getByRole("form", { name: "New API token" }),
      );
      await escCloses(
        "IP aliases",
        page.getByRole("button", { name: "New alias" }),
        page.getByRole("form", { name: "New alias" }),
      );
      await escCloses(
        "HEP subscriptions",
        page.getByRole("button", { name: "New subscription" }),
        page.getByRole("form", { name: "New HEP subscription" }),
      );

      // 3. The call window at 400 px: the heading holds the whole Call-ID, wrapped, and as hover text.
      await nav.getByRole("link", { name: "Dashboards" }).click();
      const callSearch = page.getByRole("region", { name: "Call search" });
      await callSearch.getByRole("button", { name: "Search", exact: true }).click();
      const results = page.getByRole("table", { name: "Search results" });
      const row = results.getByRole("row", { name: /^Open call near-/ }).first();
      const callId = ((await row.getAttribute("aria-label")) ?? "").replace(/^Open call /, "");
      expect(callId).toMatch(/^near-[0-9a-f-]{36}$/);
      // The grid cell of the Call-ID carries the whole value on hover.
      expect(await row.getByRole("cell", { name: callId, exact: true }).getAttribute("title")).toBe(callId);
      await page.setViewportSize({ width: 400, height: 700 });
      await row.click();
      const dialog = page.getByRole("dialog", { name: `Call ${callId}` });
      const heading = dialog.getByRole("heading", { name: `Call ${callId}` });
      await heading.waitFor();
      await expectWhole(page, heading);
      expect(await heading.getAttribute("title")).toBe(callId);
      await page.screenshot({ path: join(shots, "narrow-call.png") });
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
