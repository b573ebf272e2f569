/**
 * A partial export in the dashboard (docs/ARCHITECTURE.md "Reads over several nodes"): with a node
 * of coordinator.nodes down, the PCAP of a call misses that node's messages, and the call view's
 * Export tab says so beside the download, naming the failed node, until the next download.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

/** A loopback port nothing listens on (the node that is down). */
function closedPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

peerTest(
  "the Export tab warns that the PCAP is partial and names the node that failed",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-export-partial-");
    const id = `partial-${crypto.randomUUID()}`;
    await using h = await startHabits(dir.path, {
      calls: { [id]: ["10.80.0.11", "10.80.0.1"] },
      config: { coordinator: { nodes: [{ name: "pop-down", url: `http://127.0.0.1:${closedPort()}` }] } },
    });
    const { page, base } = h;
    await page.goto(`${base}/?call_id=${encodeURIComponent(id)}`);
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("tab", { name: "Export" }).click();
    // The view's header has the same buttons but no warning beside them. Until the call's messages
    // are loaded (the down node can make that slow) the tab shows "Loading the call…" and only the
    // header's buttons exist, so wait for the tab's own Download section before choosing its button.
    await dialog.getByRole("heading", { name: "Download", exact: true }).waitFor();
    const tabButtons = dialog.locator(".dialog-body").getByRole("button", { name: "Download PCAP" });
    expect(await tabButtons.count()).toBe(1);
    await tabButtons.click();
    const warning = dialog.getByRole("alert").filter({ hasText: "Partial file" });
    await warning.waitFor();
    const text = await warning.textContent();
    expect(text).toContain("pop-down failed");
    expect(text).toContain("The messages of those nodes are missing");
    expect(h.errors).toEqual([]);
  },
  120_000,
);
