import { expect, test } from "bun:test";
import { defaultDashboards } from "./default-dashboards.ts";

test("the defaults with the default widgets and Quality, games last", () => {
  const all = defaultDashboards({ games: true });
  expect(all.map((d) => d.name)).toEqual(["Home", "Smart Search", "Quality", "Games", "NetGames"]);
  expect(all.map((d) => d.position)).toEqual([0, 1, 2, 3, 4]);
  const types = (name: string) =>
    all
      .find((d) => d.name === name)!
      .layout.map((w) => w.type)
      .sort();
  expect(types("Home")).toEqual(["call-search", "clock", "result-table"]);
  expect(types("Smart Search")).toEqual(["protocol-search", "result-table", "time-chart"]);
  // The call KPIs of docs/KPIS.md, each widget's view or metric in its config.
  expect(all.find((d) => d.name === "Quality")!.layout.map((w) => [w.type, w.config.view ?? w.config.metric])).toEqual([
    ["kpi-table", "summary"],
    ["kpi-chart", "asr"],
    ["kpi-table", "codes"],
    ["kpi-table", "destinations"],
  ]);
  expect(types("Games")).toEqual([
    "game-chess",
    "game-jitter-buffer-hero",
    "game-packet-defender",
    "game-sip-dialog-master",
    "game-sipetris",
  ]);
  expect(types("NetGames")).toEqual(["game-netchess", "game-netris"]);
  for (const d of all) expect(new Set(d.layout.map((w) => w.id)).size).toBe(d.layout.length);
});

test("games off: the game dashboards are not seeded", () => {
  expect(defaultDashboards({ games: false }).map((d) => d.name)).toEqual(["Home", "Smart Search", "Quality"]);
});
