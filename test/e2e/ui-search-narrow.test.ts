/**
 * The call search's Search button is reachable on a phone, 390 px wide (docs/UI.md "Nothing cut"):
 * shown whole without scrolling inside the widget (no ancestor clips it), nothing covers it, and a
 * click on it runs the search.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "390 px: the Search button of the call search is visible, unclipped and clickable",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-search-390-");
    const id = `narrow-${crypto.randomUUID()}`;
    await using h = await startHabits(dir.path, {
      calls: { [id]: ["10.50.0.11", "10.50.0.1"] },
      viewport: { width: 390, height: 844 },
    });
    const { page } = h;
    const form = page.getByRole("form", { name: "Search call" });
    const button = form.getByRole("button", { name: "Search", exact: true });
    await button.waitFor();
    const where = await button.evaluate((el) => {
      const b = el.getBoundingClientRect();
      // Every ancestor that clips (overflow other than visible) must show the whole button as it is.
      const clippedBy: string[] = [];
      for (let a = el.parentElement; a; a = a.parentElement) {
        const st = getComputedStyle(a);
        if (st.overflowX === "visible" && st.overflowY === "visible") continue;
        const r = a.getBoundingClientRect();
        if (b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5 || b.left < r.left - 0.5 || b.right > r.right + 0.5)
          clippedBy.push(a.className);
      }
      const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
      return {
        clippedBy,
        covered: !hit || !el.contains(hit),
        inViewport: b.left >= 0 && b.right <= innerWidth && b.top >= 0 && b.bottom <= innerHeight,
      };
    });
    expect(where).toEqual({ clippedBy: [], covered: false, inViewport: true });
    await form.getByLabel("Call-ID").fill(id);
    await button.click({ trial: false });
    await page.getByText("3 messages").waitFor();
    expect(h.errors).toEqual([]);
  },
  120_000,
);
