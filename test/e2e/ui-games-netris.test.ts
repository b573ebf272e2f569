/**
 * The Netris widget in Chromium (docs/GAMES.md "Netris"): two users on the NetGames dashboard join
 * one room, get Ready, play through the real relay (keys move and drop pieces, the opponent's
 * mini-board follows), and the one who stacks to the top loses. No console errors.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { canvasColours, startGamesBrowser } from "./ui-games-harness.ts";

const netris = (page: Page) => page.getByRole("region", { name: "Netris" });
const status = async (page: Page, term: string) => Number(await netris(page).getByRole("definition").nth(["Pieces", "Lines", "Garbage sent", "Garbage received", "Incoming", "Next"].indexOf(term)).textContent());

peerTest(
  "Netris widget: join a room, Ready, play with the keyboard against a second browser, top out and lose",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-netris-e2e-");
    await using g = await startGamesBrowser({}, dir.path);
    const alice = await g.open("admin");
    const bob = await g.open("bob");
    for (const p of [alice, bob]) await p.getByRole("tab", { name: "NetGames" }).click();

    // The lobby refuses a bad room code in words (the relay's 400, read before the handshake).
    await netris(alice).getByLabel("Room code").fill("bad room!");
    await netris(alice).getByRole("button", { name: "Join room" }).click();
    await netris(alice).getByRole("alert").filter({ hasText: "room may contain letters, digits" }).waitFor();

    await netris(alice).getByLabel("Room code").fill("e2e-room");
    await netris(alice).getByLabel("Your name").fill("Alice");
    await netris(alice).getByRole("button", { name: "Join room" }).click();
    await netris(alice).getByRole("status").filter({ hasText: /Waiting for an opponent in room e2e-room… \(\d+ s left\)/ }).waitFor();
    await netris(bob).getByLabel("Room code").fill("e2e-room");
    await netris(bob).getByRole("button", { name: "Join room" }).click();
    await netris(bob).getByText("Matched with Alice in room e2e-room.").waitFor();
    await netris(alice).getByText("Matched with bob in room e2e-room.").waitFor();

    await netris(alice).getByRole("button", { name: "Ready", exact: true }).click();
    await netris(bob).getByText("Alice is ready.").waitFor();
    await netris(bob).getByRole("button", { name: "Ready", exact: true }).click();
    const board = netris(alice).getByRole("group", { name: /^Netris board/ });
    await board.waitFor();
    await netris(bob).getByRole("group", { name: /^Netris board/ }).waitFor();
    await waitFor("a drawn board", async () => (await canvasColours(alice, "Your board: 0 pieces, 0 lines")) > 2);

    // Keys: a move changes the frame; Space drops the piece (one more piece locked).
    const before = await board.getByRole("img").first().evaluate((c) => (c as HTMLCanvasElement).toDataURL());
    await board.focus();
    await alice.keyboard.press("ArrowLeft");
    await alice.keyboard.press("ArrowLeft");
    const after = await board.getByRole("img").first().evaluate((c) => (c as HTMLCanvasElement).toDataURL());
    expect(after).not.toBe(before);
    await alice.keyboard.press("Space");
    await waitFor("one piece locked", async () => (await status(alice, "Pieces")) >= 1);
    // Bob's mini-board shows Alice's board as she reported it.
    await waitFor("Alice's blocks on Bob's mini-board", async () => (await canvasColours(bob, "Board of Alice")) > 1);

    // Alice drops pieces until her stack reaches the top: she loses, Bob wins.
    for (let i = 0; i < 60; i++) {
      if ((await netris(alice).getByRole("status").filter({ hasText: "You lose" }).count()) > 0) break;
      await alice.keyboard.press("Space").catch(() => {});
    }
    await netris(alice).getByRole("status").filter({ hasText: "You lose: your stack reached the top." }).waitFor();
    await netris(bob).getByRole("status").filter({ hasText: "You win: your opponent's stack reached the top." }).waitFor();
    await netris(bob).getByRole("button", { name: "Play again" }).click();
    await netris(bob).getByRole("button", { name: "Quick match" }).waitFor();
    // Only the refused room code's 400 (the browser logs every failed request).
    expect(g.consoleErrors).toEqual(["admin: Failed to load resource: the server responded with a status of 400 (Bad Request)"]);
  },
  180_000,
);
