/**
 * Two calls in one view (docs/UI.md "Nothing cut"): while no message is selected the detail pane
 * holds one sentence and the ladder takes the width, so the four endpoint columns of two calls fit
 * at 1280 and 1000 px; where they cannot, the ladder scrolls sideways and every column can be shown
 * whole.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

/** Each endpoint column lies whole inside the ladder's visible area, or does after scrolling it into view. */
async function columnsWhole(page: Page): Promise<Array<{ host: string; whole: boolean }>> {
  return await page.evaluate(() => {
    const wrap = document.querySelector<HTMLElement>(".ladder-wrap")!;
    return Array.from(document.querySelectorAll<HTMLElement>(".ladder-hosts .host")).map((h) => {
      const fits = () => {
        const w = wrap.getBoundingClientRect();
        const b = h.getBoundingClientRect();
        return b.left >= w.left - 0.5 && b.right <= w.left + wrap.clientWidth + 0.5;
      };
      let whole = fits();
      if (!whole && getComputedStyle(wrap).overflowX !== "hidden") {
        h.scrollIntoView({ inline: "nearest", block: "nearest" });
        whole = fits();
        wrap.scrollLeft = 0;
      }
      return { host: h.getAttribute("aria-label") ?? "", whole };
    });
  });
}

peerTest(
  "two calls together: the ladder's four columns fit (or scroll whole) while the detail pane is empty",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-ladder2-");
    const a = `two-a-${crypto.randomUUID()}`;
    const b = `two-b-${crypto.randomUUID()}`;
    await using h = await startHabits(dir.path, {
      calls: { [a]: ["10.70.0.11", "10.70.0.1"], [b]: ["10.70.0.12", "10.70.0.2"] },
    });
    const { page, base } = h;
    for (const width of [1280, 1000]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${base}/?call_id=${encodeURIComponent(`${a};${b}`)}`);
      const view = page.getByRole("dialog", { name: "2 calls together" });
      await view.getByRole("list", { name: "Endpoints" }).waitFor();
      const fit = await page.evaluate(() => {
        const wrap = document.querySelector<HTMLElement>(".ladder-wrap")!;
        return wrap.scrollWidth <= wrap.clientWidth + 1;
      });
      expect({ width, fit }).toEqual({ width, fit: true });
      expect(await columnsWhole(page)).toEqual(
        ["10.70.0.11", "10.70.0.1", "10.70.0.12", "10.70.0.2"].map((host) => ({ host, whole: true })),
      );
    }
    expect(h.errors).toEqual([]);
  },
  120_000,
);
