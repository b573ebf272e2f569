import { expect, test } from "bun:test";
import { defaultDashboards } from "./default-dashboards.ts";

test("four defaults with the widgets of spec doc 1, games last", () => {
  const all = defaultDashboards({ games: true });
  expect(all.map((d) => d.name)).toEqual(["Home", "Smart Search", "Games", "NetGames"]);
  const types = (name: string) =>
    all
      .find((d) => d.name === name)!
      .layout.map((w) => w.type)
      .sort();
  expect(types("Home")).toEqual(["call-search", "clock", "result-table"]);
  expect(types("Smart Search")).toEqual(["protocol-search", "result-table", "time-chart"]);
  expect(types("Games")).toEqual(["game-chess", "game-jitter-buffer-hero", "game-packet-defender", "game-sip-dialog-master", "game-sipetris"]);
  expect(types("NetGames")).toEqual(["game-netchess", "game-netris"]);
  for (const d of all) expect(new Set(d.layout.map((w) => w.id)).size).toBe(d.layout.length);
});

test("games off: the game dashboards are not seeded", () => {
  expect(defaultDashboards({ games: false }).map((d) => d.name)).toEqual(["Home", "Smart Search"]);
});
