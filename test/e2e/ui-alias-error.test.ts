/**
 * The "IP aliases" page names a wrong address in one line (docs/ADMIN.md "IP aliases"):
 * "127.0.0.1/33: prefix length must be 0-32", never the regular expression of the API schema.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "IP aliases: an invalid address says what is wrong with it in one line",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-alias-");
    await using h = await startHabits(dir.path);
    const { page, base } = h;
    await page.goto(`${base}/#/admin/aliases`);
    await page.getByRole("button", { name: "New alias" }).click();
    const form = page.getByRole("form", { name: "New alias" });
    await form.getByLabel("Address or CIDR").fill("127.0.0.1/33");
    await form.getByLabel("Name").fill("loopback");
    await form.getByRole("button", { name: "Save" }).click();
    const alert = form.getByRole("alert");
    await alert.waitFor();
    expect(await alert.innerText()).toBe("127.0.0.1/33: prefix length must be 0-32");
    expect(h.errors).toEqual([]);
  },
  120_000,
);
