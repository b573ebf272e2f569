/**
 * The transaction window in Settings is read and typed in minutes before / after (docs/UI.md
 * "Settings"), never as "-300" seconds; it is stored as the API expects (signed milliseconds).
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "Settings: the transaction window says '5 min before / 5 min after' and saves signed milliseconds",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-settings-");
    await using h = await startHabits(dir.path);
    const { page, base, bearer } = h;
    await page.goto(`${base}/#/settings`);
    const form = page.getByRole("form", { name: "Transaction window" });
    const before = form.getByLabel("Before the first selected message (min)");
    await before.waitFor();
    expect(await before.inputValue()).toBe("5");
    expect(await form.getByLabel("After the last selected message (min)").inputValue()).toBe("5");
    const summary = form.getByRole("status");
    expect(await summary.innerText()).toContain("5 min before / 5 min after");
    expect(await form.innerText()).not.toContain("-300");

    await before.fill("2");
    await form.getByLabel("Look after the search range (min)").fill("1.5");
    expect(await summary.innerText()).toContain("2 min before / 5 min after");
    await form.getByRole("button", { name: "Save window" }).click();
    await page.getByText("Transaction window saved").waitFor();
    const r = await fetch(`${base}/api/v4/me/settings`, { headers: { authorization: `Bearer ${bearer}` } });
    const items = (
      (await r.json()) as { data: { items: Array<{ category: string; param: string; data: Record<string, number> }> } }
    ).data.items;
    expect(items.find((s) => s.category === "transaction" && s.param === "range")?.data).toMatchObject({
      from: -120_000,
      to: 300_000,
      message_from: -300_000,
      message_to: 90_000,
    });

    // A reload shows the stored minutes again; a negative or too large value is refused in words.
    await page.reload();
    expect(await before.inputValue()).toBe("2");
    await before.fill("-3");
    await form.getByRole("button", { name: "Save window" }).click();
    await form
      .getByRole("alert")
      .filter({ hasText: "Before the first selected message: minutes from 0 to 1440 (one day)" })
      .waitFor();
    expect(h.errors).toEqual([]);
  },
  120_000,
);
