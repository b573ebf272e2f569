/**
 * A "Quality" dashboard of call KPIs is seeded by default (docs/DASHBOARD.md "Quality dashboard"):
 * a new user finds the tab after Smart Search with the KPI summary, ASR over time, response codes and
 * failing destinations of the dashboard's time range, computed from the ingested calls.
 */
import { expect } from "bun:test";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { startHabits } from "./ui-habits-harness.ts";

peerTest(
  "default dashboards: Quality shows the call KPIs",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-ui-quality-");
    await using h = await startHabits(dir.path, {
      calls: { [`q-${crypto.randomUUID()}`]: ["10.60.0.11", "10.60.0.1"] },
    });
    const { page } = h;
    // The tabs come with the dashboards' list: wait for the last default one before reading them all.
    await page.getByRole("tablist", { name: "Dashboards" }).getByRole("tab", { name: "NetGames" }).waitFor();
    expect(await page.getByRole("tablist", { name: "Dashboards" }).getByRole("tab").allInnerTexts()).toEqual([
      "Home",
      "Smart Search",
      "Quality",
      "Games",
      "NetGames",
    ]);
    await page.getByRole("tab", { name: "Quality" }).click();
    await page.getByRole("tab", { name: "Quality", selected: true }).waitFor();
    const panel = page.getByRole("tabpanel", { name: "Quality" });
    await panel.getByRole("region", { name: "Call KPI table" }).first().waitFor();
    expect(await panel.getByRole("region", { name: "Call KPI table" }).count()).toBe(3);
    expect(await panel.getByRole("region", { name: "Call KPIs over time" }).count()).toBe(1);
    // One answered call: ASR 100 % in the chart's summary.
    await panel.getByRole("img", { name: /^ASR 100/ }).waitFor();
    expect(h.errors).toEqual([]);
  },
  120_000,
);
