/**
 * A new dashboard is named in the page's own dialog, not window.prompt (docs/UI.md "Forms and
 * dialogs"): a labelled dialog with OK and Cancel, focus in the name field, Esc closes it with
 * focus back on "+ New", OK creates and selects the dashboard; Rename uses the same dialog.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "new dashboard and rename: a labelled dialog with OK/Cancel, Esc closes it, never window.prompt",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-name-");
    await using h = await startHabits(dir.path);
    const { page } = h;
    const prompts: string[] = [];
    page.on("dialog", (d) => {
      prompts.push(d.message());
      void d.dismiss();
    });
    const newButton = page.getByRole("button", { name: "+ New" });
    await newButton.click();
    const dialog = page.getByRole("dialog", { name: "New dashboard" });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("name-dialog-input");
    expect(await dialog.getByLabel("Name").inputValue()).toBe("New dashboard");
    await dialog.getByRole("button", { name: "Cancel" }).waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect(await newButton.evaluate((el) => el === document.activeElement)).toBe(true);

    await newButton.click();
    await dialog.getByLabel("Name").fill("SBC edge");
    await dialog.getByRole("button", { name: "OK" }).click();
    await page.getByRole("tab", { name: "SBC edge", selected: true }).waitFor();

    await page.getByRole("button", { name: "Rename" }).click();
    const rename = page.getByRole("dialog", { name: "Rename dashboard" });
    await rename.getByLabel("Name").fill("SBC west");
    await page.keyboard.press("Enter");
    await page.getByRole("tab", { name: "SBC west", selected: true }).waitFor();
    expect(prompts).toEqual([]);
    expect(h.errors).toEqual([]);
  },
  120_000,
);
