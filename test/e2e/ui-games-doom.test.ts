/**
 * The Doom widget in Chromium (docs/GAMES.md "Doom"): Debian's Freedoom IWAD served as
 * `doom1.wad` from a temp `coordinator.http_server.gamedata_dir` boots E1M1, draws non-blank
 * frames (canvas pixels read in the page), moves on key presses, opens the automap with Tab; with no
 * file the widget says where to put it; with games off, that the server serves no game data. No
 * console errors.
 */
import { expect } from "bun:test";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { PEERS, peerTest, tempDir, waitFor, type Peer } from "../harness.ts";
import { PASSWORD, canvasColours, startGamesBrowser } from "./ui-games-harness.ts";

const FREEDOOM_WAD = "/usr/share/games/doom/freedoom1.wad";
const FREEDOOM: Peer = { install: "apt-get install freedoom", probe: () => existsSync(FREEDOOM_WAD) };

/** A dashboard "Doom" with the widget, made through the API as the user would with "+ New". */
async function doomDashboard(base: string): Promise<void> {
  const login = await fetch(`${base}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const r = await fetch(`${base}/api/v4/dashboards`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "Doom",
      position: 9,
      layout: [{ id: "doom", type: "game-doom", x: 0, y: 0, w: 8, h: 12, config: {} }],
    }),
  });
  expect(r.status).toBe(201);
}

const doom = (page: Page) => page.getByRole("region", { name: "Doom" });
const position = async (page: Page) =>
  (await doom(page)
    .getByText(/^(View|Automap) · x /)
    .textContent()) ?? "";

peerTest(
  "Doom widget: Freedoom served as doom1.wad boots E1M1, draws, moves on keys, Tab automap; a missing file says where to put it",
  [PEERS.chromium, FREEDOOM],
  async () => {
    await using dir = tempDir("svc-doom-e2e-");
    const data = join(dir.path, "gamedata");
    mkdirSync(data);
    copyFileSync(FREEDOOM_WAD, join(data, "doom1.wad"));
    await using g = await startGamesBrowser({ coordinator: { http_server: { gamedata_dir: data } } }, dir.path);
    await doomDashboard(g.a.app.coordinatorUrl!);
    const page = await g.open("admin");
    await page.getByRole("tab", { name: "Doom" }).click();
    await doom(page)
      .getByText(/^E1M1 · C1M1: Outer Prison$/)
      .waitFor({ timeout: 60_000 });
    const view = doom(page).getByRole("group", { name: /^Doom view/ });
    await waitFor("a drawn first-person frame", async () => (await canvasColours(page, "First-person view")) > 50);
    const start = await position(page);
    expect(start).toMatch(/^View · x -?\d+, y -?\d+, facing \d+°$/);
    const frame = async () => await view.getByRole("img").evaluate((c) => (c as HTMLCanvasElement).toDataURL());
    const before = await frame();

    await view.click();
    await page.keyboard.down("ArrowUp");
    await waitFor("the player moved forward", async () => (await position(page)) !== start);
    await page.keyboard.up("ArrowUp");
    expect(await frame()).not.toBe(before);
    const moved = await position(page);
    await page.keyboard.down("ArrowLeft");
    await waitFor(
      "the player turned",
      async () => !(await position(page)).endsWith(moved.replace(/^.*facing /, "facing ")),
    );
    await page.keyboard.up("ArrowLeft");

    await page.keyboard.press("Tab");
    await waitFor("the automap drawn", async () => (await canvasColours(page, "Automap")) > 2);
    expect(await position(page)).toStartWith("Automap · ");
    await page.keyboard.press("Escape");
    await doom(page).getByRole("img", { name: "First-person view" }).waitFor();
    expect(g.consoleErrors).toEqual([]);

    // No doom1.wad: the widget says where to put it.
    await using dir2 = tempDir("svc-doom-e2e-");
    mkdirSync(join(dir2.path, "gamedata"));
    await using g2 = await startGamesBrowser(
      { coordinator: { http_server: { gamedata_dir: join(dir2.path, "gamedata") } } },
      dir2.path,
    );
    await doomDashboard(g2.a.app.coordinatorUrl!);
    const empty = await g2.open("admin");
    await empty.getByRole("tab", { name: "Doom" }).click();
    await doom(empty)
      .getByRole("status")
      .filter({ hasText: "put doom1.wad into the game data directory (coordinator.http_server.gamedata_dir" })
      .waitFor();
    await doom(empty).getByRole("button", { name: "Try again" }).waitFor();
    // Games off: /gamedata/ is not registered, and the widget says so instead of asking for the file.
    await using dir3 = tempDir("svc-doom-e2e-");
    await using g3 = await startGamesBrowser(
      { coordinator: { widgets: { control: { games: false } }, http_server: { gamedata_dir: data } } },
      dir3.path,
    );
    await doomDashboard(g3.a.app.coordinatorUrl!);
    const off = await g3.open("admin");
    await doom(off)
      .getByRole("alert")
      .filter({ hasText: "This server does not serve game data: games are off (coordinator.widgets.control.games)" })
      .waitFor();
    // The browser may log the 404 of the missing file (when it comes after sign-in); nothing else.
    expect(
      g2.consoleErrors.filter(
        (e) => e !== "admin: Failed to load resource: the server responded with a status of 404 (Not Found)",
      ),
    ).toEqual([]);
  },
  240_000,
);
