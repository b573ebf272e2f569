/**
 * Every popover of the dashboard in a real browser (docs/UI.md "Popovers"): shown
 * whole inside the viewport above the widgets, closed by Esc and by a click outside, reachable and
 * usable by keyboard alone.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { checkPopover, expectFullyShown, focusInside, isFocused, openBrowser, setUp } from "./ui-time-harness.ts";

peerTest(
  "popovers: shown whole above the widgets inside the viewport, closed by Esc (focus back on the trigger) and by a click outside, reachable by keyboard alone",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-pop-");
    const { appliance, base } = await setUp(dir.path);
    await using _a = appliance;
    const { browser, page, errors } = await openBrowser(base);
    try {
      const callSearch = page.getByRole("region", { name: "Call search" });
      const results = page.getByRole("region", { name: "Results" });
      await callSearch.getByRole("button", { name: "Search", exact: true }).click();
      await results
        .getByRole("status")
        .filter({ hasText: /^6 messages/ })
        .waitFor();

      // Dashboard time range: Enter on the next preset selects it.
      const rangeButton = page.getByRole("button", { name: /^Dashboard time range:/ });
      const picker = page.getByRole("dialog", { name: "Dashboard time range" });
      await checkPopover(page, rangeButton, picker, "Enter", async () => {
        // Focus started on the active preset (Last hour); ArrowDown went to the next one.
        expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe("Last 6 hours");
        await page.keyboard.press("Enter");
        await picker.waitFor({ state: "detached" });
        await page.getByRole("button", { name: /^Dashboard time range: Last 6 hours/ }).waitFor();
        expect(await isFocused(rangeButton)).toBe(true);
      });

      // Fields… at the foot of the call search: Enter toggles the focused field, Esc closes.
      const fieldsButton = callSearch.getByRole("button", { name: "Fields…" });
      const fields = page.getByRole("dialog", { name: "Fields shown in the form" });
      await checkPopover(page, fieldsButton, fields, "Enter", async () => {
        const box = fields.getByRole("checkbox").nth(1);
        expect(await isFocused(box)).toBe(true);
        const was = await box.isChecked();
        await page.keyboard.press("Enter");
        await waitFor("the field toggled", async () => (await box.isChecked()) !== was);
        await page.keyboard.press("Enter");
        await waitFor("the field toggled back", async () => (await box.isChecked()) === was);
        await page.keyboard.press("Escape");
        await fields.waitFor({ state: "detached" });
        expect(await isFocused(fieldsButton)).toBe(true);
      });

      // Method values: ArrowDown on the trigger opens, Enter checks a method into the field.
      const methodButton = callSearch.getByRole("button", { name: "Choose Method values" });
      const methods = page.getByRole("dialog", { name: "Method values" });
      await checkPopover(page, methodButton, methods, "ArrowDown", async () => {
        expect(await isFocused(methods.getByRole("checkbox").nth(1))).toBe(true);
        const focused = await page.evaluate(() => (document.activeElement?.closest("label")?.textContent ?? "").trim());
        await page.keyboard.press("Enter");
        await page.keyboard.press("Escape");
        await methods.waitFor({ state: "detached" });
        expect(await isFocused(methodButton)).toBe(true);
        expect(await callSearch.getByLabel("Method", { exact: true }).inputValue()).toBe(focused);
        await callSearch.getByLabel("Method", { exact: true }).fill("");
      });

      // The widget menu: Enter on its item gives the widget its own range.
      const menuButton = callSearch.getByRole("button", { name: "Call search widget menu" });
      const menu = page.getByRole("menu", { name: "Call search widget menu" });
      await checkPopover(page, menuButton, menu, "Enter", async () => {
        // One item: ArrowDown wraps onto it again.
        expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe("Use own time range");
        await page.keyboard.press("Enter");
        await menu.waitFor({ state: "detached" });
        expect(await isFocused(menuButton)).toBe(true);
      });

      // The widget's own range badge.
      const badge = callSearch.getByRole("button", { name: /^Own time range of Call search: Last 6 hours/ });
      const own = page.getByRole("dialog", { name: "Own time range of Call search" });
      await checkPopover(page, badge, own, "Enter", async () => {
        await page.keyboard.press("Enter");
        await callSearch.getByRole("button", { name: /^Own time range of Call search: Last 24 hours/ }).waitFor();
      });

      // Columns… of the result table (many columns: the panel scrolls inside the viewport).
      const columnsButton = results.getByRole("button", { name: "Columns…" });
      const columns = page.getByRole("dialog", { name: "Columns shown" });
      await checkPopover(page, columnsButton, columns, "Enter", async () => {
        expect(await isFocused(columns.getByRole("checkbox").nth(1))).toBe(true);
        await page.keyboard.press("Tab");
        expect(await focusInside(columns)).toBe(true);
        await page.keyboard.press("Escape");
        await columns.waitFor({ state: "detached" });
        expect(await isFocused(columnsButton)).toBe(true);
      });

      // Saved filters of the call search: one saved through "Save filters…", then the list; Enter on
      // "Load …" fills the form and closes the list.
      await callSearch.getByLabel("From User").fill("1001");
      await callSearch.getByRole("button", { name: "Save filters…" }).click();
      const saveDialog = page.getByRole("dialog", { name: "Save filters" });
      await saveDialog.getByLabel("Name").fill("Calls of 1001");
      await saveDialog.getByRole("button", { name: "Save" }).click();
      await saveDialog.waitFor({ state: "detached" });
      await callSearch.getByLabel("From User").fill("");
      const savedButton = callSearch.getByRole("button", { name: "Saved filters" });
      const saved = page.getByRole("dialog", { name: "Saved filters" });
      await checkPopover(page, savedButton, saved, "Enter", async () => {
        // Focus started on "Load Calls of 1001"; ArrowDown went to its Rename, ArrowUp goes back.
        expect(await isFocused(saved.getByRole("button", { name: "Rename Calls of 1001" }))).toBe(true);
        await page.keyboard.press("ArrowUp");
        expect(await isFocused(saved.getByRole("button", { name: "Load Calls of 1001" }))).toBe(true);
        await page.keyboard.press("Enter");
        await saved.waitFor({ state: "detached" });
        expect(await isFocused(savedButton)).toBe(true);
        expect(await callSearch.getByLabel("From User").inputValue()).toBe("1001");
      });

      // A narrow screen: the dashboard picker (wider than the space right of its button) stays inside.
      await page.setViewportSize({ width: 400, height: 640 });
      await rangeButton.click();
      await picker.waitFor();
      await expectFullyShown(page, picker);
      await page.keyboard.press("Escape");

      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
