/**
 * The Netris widget in Chromium (docs/GAMES.md "Netris"): two users on the NetGames dashboard join
 * one room, get Ready, play through the real relay (keys move and drop pieces, the opponent's
 * mini-board follows), and the one who stacks to the top loses. Then against a scripted opponent
 * (the npm `ws` client): its line clears arrive as garbage rows, its board shows in the mini-board,
 * its top-out wins. No console errors.
 */
import { expect } from "bun:test";
import type { Page } from "playwright-core";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { connectPlayer } from "../integration/netris-helpers.ts";
import { PASSWORD, canvasColours, startGamesBrowser } from "./ui-games-harness.ts";

const netris = (page: Page) => page.getByRole("region", { name: "Netris" });
const status = async (page: Page, term: string) =>
  Number(
    await netris(page)
      .getByRole("definition")
      .nth(["Pieces", "Lines", "Garbage sent", "Garbage received", "Incoming", "Next"].indexOf(term))
      .textContent(),
  );

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
    await netris(alice)
      .getByRole("status")
      .filter({ hasText: /Waiting for an opponent in room e2e-room… \(\d+ s left\)/ })
      .waitFor();
    await netris(bob).getByLabel("Room code").fill("e2e-room");
    await netris(bob).getByRole("button", { name: "Join room" }).click();
    await netris(bob).getByText("Matched with Alice in room e2e-room.").waitFor();
    await netris(alice).getByText("Matched with bob in room e2e-room.").waitFor();

    await netris(alice).getByRole("button", { name: "Ready", exact: true }).click();
    await netris(bob).getByText("Alice is ready.").waitFor();
    await netris(bob).getByRole("button", { name: "Ready", exact: true }).click();
    const board = netris(alice).getByRole("group", { name: /^Netris board/ });
    await board.waitFor();
    await netris(bob)
      .getByRole("group", { name: /^Netris board/ })
      .waitFor();
    await waitFor("a drawn board", async () => (await canvasColours(alice, "Your board: 0 pieces, 0 lines")) > 2);

    // Keys: a move changes the frame; Space drops the piece (one more piece locked).
    const before = await board
      .getByRole("img")
      .first()
      .evaluate((c) => (c as HTMLCanvasElement).toDataURL());
    await board.focus();
    await alice.keyboard.press("ArrowLeft");
    await alice.keyboard.press("ArrowLeft");
    const after = await board
      .getByRole("img")
      .first()
      .evaluate((c) => (c as HTMLCanvasElement).toDataURL());
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
    await netris(bob)
      .getByRole("status")
      .filter({ hasText: "You win: your opponent's stack reached the top." })
      .waitFor();
    await netris(bob).getByRole("button", { name: "Play again" }).click();
    await netris(bob).getByRole("button", { name: "Quick match" }).waitFor();
    // Only the refused room code's 400 (the browser logs every failed request).
    expect(g.consoleErrors).toEqual([
      "admin: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  },
  180_000,
);

peerTest(
  "Netris widget against a scripted opponent: garbage arrives (Incoming, then received at the next lock), the mini-board follows, the opponent's top-out wins",
  [PEERS.chromium],
  async () => {
    await using dir = tempDir("svc-netris-e2e-");
    await using g = await startGamesBrowser({}, dir.path);
    const alice = await g.open("admin");
    await g.open("bob");
    const base = g.a.app.coordinatorUrl!;
    const login = await fetch(`${base}/api/v4/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "bob", password: PASSWORD }),
    });
    const token = ((await login.json()) as { token: string }).token;
    await alice.getByRole("tab", { name: "NetGames" }).click();
    await netris(alice).getByLabel("Room code").fill("scripted");
    await netris(alice).getByRole("button", { name: "Join room" }).click();
    await netris(alice).getByRole("status").filter({ hasText: "Waiting for an opponent" }).waitFor();
    using bob = connectPlayer(
      `${base.replace(/^http/, "ws")}/api/v4/games/netris?room=scripted&display=Script&access_token=${token}`,
    );
    await bob.next("matched");
    bob.send({ type: "ready" });
    await netris(alice).getByText("Script is ready.").waitFor();
    await netris(alice).getByRole("button", { name: "Ready", exact: true }).click();
    await bob.next("start");
    await netris(alice)
      .getByRole("group", { name: /^Netris board/ })
      .waitFor();

    // Four lines from the opponent: four garbage rows wait, and land when Alice's piece locks.
    bob.send({ type: "line_clear", lines: 4 });
    expect((await bob.next("line_clear")).garbage).toBe(4);
    await waitFor("4 rows incoming", async () => (await status(alice, "Incoming")) === 4);
    await netris(alice)
      .getByRole("group", { name: /^Netris board/ })
      .focus();
    await alice.keyboard.press("Space");
    await waitFor("4 rows received", async () => (await status(alice, "Garbage received")) === 4);
    expect(await status(alice, "Incoming")).toBe(0);
    // Alice's board as she reported it: the four garbage rows (one hole each) at the bottom.
    const rows = (await bob.next("opponent_board")).rows as string[];
    expect(rows.slice(-4).map((r) => r.replace(/[^.]/g, "").length)).toEqual([1, 1, 1, 1]);

    // The opponent's board in the mini-board, then their top-out: Alice wins.
    expect(await canvasColours(alice, "Board of Script")).toBe(1);
    bob.send({
      type: "board",
      rows: [...Array.from({ length: 17 }, () => ".........."), "#########.", "#########.", "#########."],
    });
    await waitFor("the opponent's board drawn", async () => (await canvasColours(alice, "Board of Script")) > 1);
    bob.send({ type: "top_out" });
    await netris(alice)
      .getByRole("status")
      .filter({ hasText: "You win: your opponent's stack reached the top." })
      .waitFor();
    expect(g.consoleErrors).toEqual([]);
  },
  180_000,
);
