/**
 * An edge's dashboard shows its forwarding state (docs/DEPLOY.md "Watching an edge"): with the
 * central out of reach, the Agents page says "down" with the packets waiting in the forward log.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { forwardPacket } from "../peers/forward-packet.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "Agents page of an edge: forwarding down, with its backlog",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-forward-");
    // Port 9 (discard) on loopback: nothing answers, every batch fails.
    await using h = await startHabits(dir.path, {
      config: { ingest: { forward: { enable: true, url: "http://127.0.0.1:9", timeout_sec: 1 } } },
    });
    const { page, base, appliance } = h;
    const parts = Array.from({ length: 20 }, (_, i) => forwardPacket(`ui-fwd-${i}`, i));
    expect(
      (await fetch(`${appliance.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(parts) })).status,
    ).toBe(202);
    const table = page.getByRole("table", { name: "Forwarding to the central" });
    // The page reads /health every 5 s: reload until the first failed batch is reported.
    await page.goto(`${base}/#/admin/agents`);
    await table.getByRole("cell", { name: "down", exact: true }).waitFor({ timeout: 20_000 });
    expect(await table.getByRole("cell", { name: /^20 packets/ }).count()).toBe(1);
    expect(h.errors).toEqual([]);
  },
  120_000,
);
