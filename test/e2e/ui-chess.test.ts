/**
 * The Chess and NetChess widgets in Chromium (docs/GAMES.md "Widgets"): Chess against the
 * server's fallback (no language model configured) by clicking squares; NetChess against a `ws`
 * test client through the relay: lobby, ready, a move, a draw offer declined with Esc, chat both
 * ways, resignation, a promotion chosen in the dialog (Esc cancels it), a second tab watching.
 * No console errors.
 */
import { expect } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { buildUi } from "../../ui/build.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { ChessClient, netchessUrl, PASSWORD, players, startChessAppliance } from "../integration/netchess-helpers.ts";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByLabel("Username").fill("admin");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("tab", { name: "Home", selected: true }).waitFor();
}

peerTest(
  "Chess and NetChess widgets: play by clicking, offers, chat, resignation, promotion, spectating",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-chess-");
    await using a = await startChessAppliance(dir.path);
    // Screenshots on every run; with SVC_UPDATE_SCREENSHOTS=1 into docs/screenshots/ (as ui-dashboard.test.ts).
    const shotDir =
      process.env.SVC_UPDATE_SCREENSHOTS === "1"
        ? resolve(import.meta.dir, "../../docs/screenshots")
        : join(dir.path, "shots");
    mkdirSync(shotDir, { recursive: true });
    const shot = async (p: Page, name: string) => {
      await p.screenshot({ path: join(shotDir, name) });
      expect(statSync(join(shotDir, name)).size).toBeGreaterThan(5_000);
    };
    const base = a.app.coordinatorUrl!;
    // The browser is the administrator; the test clients play as a second user (no one plays themselves).
    const token = (await players(a)).bert;
    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      const consoleErrors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text());
      });
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      await signIn(page, base);
      // The page asks for the session before sign-in (a 401 by design); from here on nothing may fail.
      consoleErrors.length = 0;

      // Chess against the fallback: e2 shows its two legal targets, e4 is played, the reply comes.
      await page.getByRole("tab", { name: "Games", exact: true }).click();
      const chess = page.getByRole("region", { name: "Chess" });
      await chess.getByText("Opponent: server fallback").waitFor();
      const board = chess.getByRole("grid", { name: "Chess board" });
      await board.getByRole("gridcell", { name: "e2 white pawn" }).click();
      expect(await board.getByRole("gridcell", { name: /legal move$/ }).count()).toBe(2);
      await page.keyboard.press("Escape");
      await board
        .getByRole("gridcell", { name: /legal move$/ })
        .first()
        .waitFor({ state: "detached" });
      await board.getByRole("gridcell", { name: "e2 white pawn" }).click();
      await board.getByRole("gridcell", { name: "e4, legal move" }).click();
      // The fallback's choice with nothing to capture is the first legal move in UCI order: a7a5.
      await chess.getByText(/^Opponent played a5 \(fallback/).waitFor();
      await board.getByRole("gridcell", { name: "a5 black pawn" }).waitFor();
      await chess.getByRole("status").filter({ hasText: "Your move (white)" }).waitFor();
      expect(await chess.getByRole("list", { name: "Moves" }).getByRole("listitem").allTextContents()).toEqual([
        "e4 a5",
      ]);
      await board.getByRole("gridcell", { name: "g1 white knight" }).click();
      await shot(page, "games-chess.png");

      // NetChess: the browser opens a named room as White, a ws client joins as Black.
      await page.getByRole("tab", { name: "NetGames" }).click();
      const net = page.getByRole("region", { name: "NetChess" });
      const lobby = net.getByRole("form", { name: "NetChess lobby" });
      await lobby.getByRole("radio", { name: /^Room/ }).check();
      await lobby.getByLabel("Room code").fill("ui-room-1");
      await lobby.getByLabel("Colour").selectOption("white");
      await lobby.getByLabel("Name shown").fill("Browser");
      await lobby.getByRole("button", { name: "Join" }).click();
      await net.getByRole("status").filter({ hasText: "share the room code ui-room-1" }).waitFor();
      using bot = await ChessClient.open(netchessUrl(a, token, { mode: "room", room: "ui-room-1", display: "Bot" }));
      expect(await bot.next("matched")).toMatchObject({ color: "black", opponent: "Browser" });
      await net.getByText("Matched with Bot. You play white.").waitFor();
      await net.getByRole("button", { name: "Ready" }).click();
      bot.send({ type: "ready" });
      await bot.next("start");
      const netBoard = net.getByRole("grid", { name: "NetChess board" });
      await net.getByRole("timer", { name: "Browser (white) clock" }).waitFor();
      expect(await net.getByRole("timer", { name: "Bot (black) clock" }).textContent()).toContain("5:00");
      await netBoard.getByRole("gridcell", { name: "e2 white pawn" }).click();
      await netBoard.getByRole("gridcell", { name: "e4, legal move" }).click();
      expect(await bot.next("opponent_move")).toMatchObject({ uci: "e2e4", by: "white" });
      bot.move("e7e5");
      expect(await bot.next("opponent_move")).toMatchObject({ uci: "e7e5" });
      await netBoard.getByRole("gridcell", { name: "e5 black pawn" }).waitFor();

      // A draw offer appears as a prompt without taking the focus from the chat being typed; Esc declines it.
      await net.getByLabel("Chat message").focus();
      bot.send({ type: "draw_offer" });
      const offer = net.getByRole("alertdialog", { name: "Black offers a draw." });
      await offer.waitFor();
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Chat message");
      await page.keyboard.press("Escape");
      expect(await bot.next("draw_declined")).toMatchObject({ from: "white" });
      await offer.waitFor({ state: "detached" });

      // Chat both ways, shown as text.
      bot.send({ type: "chat", text: "hello <b>there</b>" });
      await net.getByRole("log", { name: "Chat" }).getByText("hello <b>there</b>").waitFor();
      await net.getByLabel("Chat message").fill("good luck");
      await net.getByRole("button", { name: "Send" }).click();
      expect(await bot.next("chat")).toMatchObject({ from: "Bot", text: "hello <b>there</b>" });
      expect(await bot.next("chat")).toMatchObject({ from: "Browser", text: "good luck" });
      bot.send({ type: "takeback_request" });
      await net.getByRole("alertdialog", { name: "Black asks to take back a move." }).waitFor();
      await shot(page, "netgames-netchess.png");
      await net
        .getByRole("alertdialog", { name: "Black asks to take back a move." })
        .getByRole("button", { name: "Decline" })
        .click();
      expect(await bot.next("takeback_declined")).toMatchObject({ from: "white" });

      // Resign through the confirmation prompt.
      await net.getByRole("button", { name: "Resign" }).click();
      await net.getByRole("alertdialog", { name: "Resign this game?" }).getByRole("button", { name: "Yes" }).click();
      expect(await bot.next("game_over")).toMatchObject({ result: "0-1", reason: "resignation" });
      await net.getByText("You lost").waitFor();
      await net.getByRole("button", { name: "Leave" }).click();
      bot.close();

      // Promotion: the bot opens a room at a position where Black (the browser) can promote.
      using host = await ChessClient.open(
        netchessUrl(a, token, {
          mode: "room",
          room: "ui-promo",
          color: "white",
          fen: "k7/8/8/8/8/8/6p1/K7 w - - 0 1",
          display: "Host",
        }),
      );
      await host.next("waiting");
      await lobby.getByRole("radio", { name: /^Room/ }).check();
      await lobby.getByLabel("Room code").fill("ui-promo");
      await lobby.getByRole("button", { name: "Join" }).click();
      await net.getByText("Matched with Host. You play black.").waitFor();
      await net.getByRole("button", { name: "Ready" }).click();
      host.send({ type: "ready" });
      await host.next("start");
      host.move("a1b1");
      await host.next("opponent_move");
      await netBoard.getByRole("gridcell", { name: "g2 black pawn" }).click();
      await netBoard.getByRole("gridcell", { name: "g1, legal move" }).click();
      const promo = net.getByRole("dialog", { name: "Promote the pawn to" });
      await promo.waitFor();
      await page.keyboard.press("Escape");
      await promo.waitFor({ state: "detached" });
      await netBoard.getByRole("gridcell", { name: "g2 black pawn" }).click();
      await netBoard.getByRole("gridcell", { name: "g1, legal move" }).click();
      await promo.getByRole("button", { name: "queen" }).click();
      expect(await host.next("opponent_move")).toMatchObject({ uci: "g2g1q", san: "g1=Q+" });
      await netBoard.getByRole("gridcell", { name: "g1 black queen" }).waitFor();

      // A second tab watches the room: the position as it stands, read-only, and the players see the count.
      const watcher = await page.context().newPage();
      watcher.on("pageerror", (e) => consoleErrors.push(String(e)));
      watcher.on("console", (m) => {
        if (m.type() === "error") consoleErrors.push(m.text());
      });
      await watcher.goto(`${base}/`);
      await watcher.getByRole("tab", { name: "NetGames" }).click();
      const wNet = watcher.getByRole("region", { name: "NetChess" });
      await wNet.getByRole("radio", { name: "Watch a room" }).check();
      await wNet.getByLabel("Room code").fill("ui-promo");
      await wNet.getByRole("button", { name: "Watch" }).click();
      const wBoard = wNet.getByRole("grid", { name: "NetChess board" });
      await wBoard.getByRole("gridcell", { name: "g1 black queen" }).waitFor();
      await wNet.getByText(/Room ui-promo · watching · 1 watching/).waitFor();
      expect(await wBoard.getByRole("gridcell", { name: "b1 white king" }).isDisabled()).toBe(true);
      expect(await wNet.getByRole("button", { name: "Resign" }).count()).toBe(0);
      await net.getByText(/Room ui-promo · 1 watching/).waitFor();
      host.move("b1a2");
      await wBoard.getByRole("gridcell", { name: "a2 white king" }).waitFor();
      await watcher.close();

      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
