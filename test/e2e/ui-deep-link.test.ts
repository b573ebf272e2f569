/**
 * `/?call_id=<id>` opens that call (docs/DASHBOARD.md "Deep links"): the search form is filled and
 * searched, and the call view (the transaction window) opens on the call; two ids joined with `;`
 * open both; an unknown id leaves the empty results saying so.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "deep link ?call_id= opens the call view of that call",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-deep-");
    const a = `deep-a-${crypto.randomUUID()}`;
    const b = `deep-b-${crypto.randomUUID()}`;
    await using h = await startHabits(dir.path, {
      calls: { [a]: ["10.40.0.11", "10.40.0.1"], [b]: ["10.40.0.12", "10.40.0.1"] },
    });
    const { page, base } = h;
    await page.goto(`${base}/?call_id=${encodeURIComponent(a)}`);
    const view = page.getByRole("dialog", { name: `Call ${a}` });
    await view.waitFor();
    await view
      .getByText(/^1\. INVITE \(SDP\) from 10\.40\.0\.11 to 10\.40\.0\.1/)
      .first()
      .waitFor({ state: "attached" });
    expect(await page.getByRole("form", { name: "Search call" }).getByLabel("Call-ID").inputValue()).toBe(a);

    await page.goto(`${base}/?call_id=${encodeURIComponent(`${a};${b}`)}`);
    await page.getByRole("dialog", { name: "2 calls together" }).waitFor();

    await page.goto(`${base}/?call_id=no-such-call`);
    await page
      .getByRole("region", { name: "Results" })
      .getByText(/^No messages match/)
      .waitFor();
    expect(await page.getByRole("dialog").count()).toBe(0);
    expect(h.errors).toEqual([]);
  },
  120_000,
);
