/**
 * `/api/v4/games/netchess` (docs/GAMES.md "NetChess"): whole
 * games played by npm `ws` clients through the relay, every way a game ends, offers, spectators,
 * refusals, and the 503 when games are switched off.
 */
import { describe, expect, test } from "bun:test";
import { Chess } from "chess.js";
import { tempDir } from "../harness.ts";
import {
  ChessClient,
  fans,
  login,
  netchessUrl,
  play,
  players,
  startChessAppliance,
  startGame,
} from "./netchess-helpers.ts";

const START = new Chess().fen();

describe("NetChess relay", () => {
  test("quick pairing, first joiner's colour and time control; scholar's mate ends 1-0 by checkmate for both players", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { admin, bert } = await players(a);
    using first = await ChessClient.open(
      netchessUrl(a, admin, {
        mode: "quick",
        color: "black",
        initial_sec: "120",
        increment_sec: "60",
        display: "First\u202e<b>",
      }),
    );
    const waiting = await first.next("waiting");
    expect(waiting).toMatchObject({ color: "black", initial_ms: 120_000, increment_ms: 60_000 });
    expect(waiting.room).toMatch(/^[A-Z]{6}$/);
    // The same user asking for a quick match again is not paired with the waiting self: a second waiting room.
    using again = await ChessClient.open(netchessUrl(a, admin, { mode: "quick" }));
    expect((await again.next("waiting")).room).not.toBe(waiting.room);
    using second = await ChessClient.open(
      netchessUrl(a, bert, { mode: "quick", color: "black", initial_sec: "5", display: "Second" }),
    );
    const [m1, m2] = await Promise.all([first.next("matched"), second.next("matched")]);
    // The second joiner inherits the time control and takes the colour left.
    expect(m2).toMatchObject({
      color: "white",
      room: waiting.room,
      initial_ms: 120_000,
      increment_ms: 60_000,
      you: "Second",
      opponent: "First <b>",
    });
    expect(m1).toMatchObject({ color: "black", you: "First <b>", opponent: "Second" });
    const seats = { white: second, black: first };
    first.send({ type: "ready" });
    second.send({ type: "ready" });
    const start = await first.next("start");
    expect(start.fen).toBe(START);
    expect(start.white_ms).toBe(120_000);
    const moves = await play(seats, ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"]);
    expect(moves.map((m) => m.san)).toEqual(["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]);
    expect(moves.at(-1)!.legal_moves).toEqual([]);
    for (const p of [first, second])
      expect(await p.next("game_over")).toMatchObject({ result: "1-0", reason: "checkmate" });
    // The 60 s increment was added after each of white's four moves: more than the initial time is left.
    const over = second.all("game_over")[0]!;
    expect(over.white_ms).toBeGreaterThan(120_000);
    second.move("a7a6");
    expect((await second.next("error")).message).toBe("the game is over");
  });

  test("an illegal move, the wrong side and a malformed frame are refused with an error and leave the game unchanged", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a);
    using _w = white;
    using _b = black;
    black.move("e7e5");
    expect((await black.next("error")).message).toBe("not your turn: white to move");
    white.move("e2e5");
    expect((await white.next("error")).message).toBe("illegal move e2e5 in this position");
    white.send({ type: "move", uci: "castle" });
    expect((await white.next("error")).message).toContain("UCI");
    white.send({ type: "teleport" });
    expect((await white.next("error")).message).toContain("unknown frame type");
    white.send({ type: "hello" });
    const sync = await white.next("clock_sync");
    expect(sync.fen).toBe(START);
    expect(sync.legal_moves).toHaveLength(20);
    // A binary frame is read as its UTF-8 text, like a text frame.
    white.sendBinary({ type: "hello" });
    expect((await white.next("clock_sync")).fen).toBe(START);
    await play({ white, black }, ["e2e4"]);
    white.move("d2d4");
    expect((await white.next("error")).message).toBe("not your turn: black to move");
  });

  test("the side whose clock runs out loses on the server's flag timer", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a, { initial_sec: "1" });
    using _w = white;
    using _b = black;
    await play({ white, black }, ["e2e4"]);
    // Black never moves.
    const over = await white.next("game_over");
    expect(over).toMatchObject({ result: "1-0", reason: "flag", black_ms: 0 });
    expect(over.white_ms).toBeGreaterThan(0);
    expect(await black.next("game_over")).toMatchObject({ reason: "flag" });
  });

  test("a flag against a lone king is a draw (the winner cannot mate)", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a, { initial_sec: "1", fen: "k7/8/8/8/8/8/8/KQ6 w - - 0 1" });
    using _w = white;
    using _b = black;
    expect(await black.next("game_over")).toMatchObject({ result: "1/2-1/2", reason: "flag", white_ms: 0 });
  });

  test("a player who disconnects loses; the other is told opponent_left", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a);
    using _w = white;
    await play({ white, black }, ["d2d4", "d7d5"]);
    black.close();
    expect(await white.next("game_over")).toMatchObject({ result: "1-0", reason: "opponent_disconnect" });
    await white.next("opponent_left");
  });

  test("up to 8 spectators watch read-only, at most 2 of them one user's; the 9th and a third player are refused", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const token = await login(a);
    const fanTokens = await fans(a, 4);
    const { white, black, room } = await startGame(a);
    using _w = white;
    using _b = black;
    const watchers: ChessClient[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const s = await ChessClient.open(
          netchessUrl(a, fanTokens[i >> 1]!, { mode: "spectate", room, display: `Fan ${i}` }),
        );
        watchers.push(s);
        expect(await s.next("matched")).toMatchObject({
          spectator: true,
          color: null,
          white: "Wilma",
          black: "Bert",
          room,
        });
        expect((await s.next("clock_sync")).fen).toBe(START);
        if (i === 1) {
          // One user cannot take all the spectator seats: fan0's third is refused, the seats stay for others.
          using third = await ChessClient.open(netchessUrl(a, fanTokens[0]!, { mode: "spectate", room }));
          expect((await third.next("error")).message).toBe(
            `you (fan0) already watch room ${room} from 2 connections: at most 2`,
          );
          expect((await third.closed).code).toBe(1008);
        }
      }
      using ninth = await ChessClient.open(netchessUrl(a, token, { mode: "spectate", room }));
      expect((await ninth.next("error")).message).toBe(`room ${room} already has 8 spectators`);
      expect((await ninth.closed).code).toBe(1013);
      using third = await ChessClient.open(netchessUrl(a, token, { mode: "room", room }));
      expect((await third.next("error")).message).toContain("is full");
      expect((await third.closed).code).toBe(1008);

      await play({ white, black }, ["e2e4"]);
      const seen = await watchers[7]!.next("opponent_move");
      expect(seen).toMatchObject({ uci: "e2e4", san: "e4", by: "white" });
      watchers[0]!.move("e7e5");
      expect((await watchers[0]!.next("error")).message).toBe("spectators are read-only");
      watchers[0]!.send({ type: "chat", text: "hi" });
      expect((await watchers[0]!.next("error")).message).toBe("spectators are read-only");
      // Chat from a player reaches everyone, sanitised and cut to 200 characters.
      white.send({ type: "chat", text: `good\u0000 luck\n\n${"x".repeat(300)}` });
      const chat = await watchers[3]!.next("chat");
      expect(chat).toMatchObject({ from: "Wilma", color: "white" });
      expect(chat.text).toBe(`good luck ${"x".repeat(190)}`);
      black.send({ type: "chat", text: " \u200b " });
      expect((await black.next("error")).message).toBe("chat text is empty");
    } finally {
      for (const s of watchers) s.close();
    }
  });

  test("takeback: declined leaves the position, accepted undoes the requester's move (and the reply)", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a);
    using _w = white;
    using _b = black;
    black.send({ type: "takeback_request" });
    expect((await black.next("error")).message).toBe("you have no move to take back");
    const [e4] = await play({ white, black }, ["e2e4"]);
    white.send({ type: "takeback_request" });
    expect(await black.next("takeback_offered")).toMatchObject({ from: "white" });
    black.send({ type: "takeback_decline" });
    expect(await white.next("takeback_declined")).toMatchObject({ from: "black" });
    white.send({ type: "hello" });
    expect((await white.next("clock_sync")).fen).toBe(e4!.fen);
    white.send({ type: "takeback_request" });
    await black.next("takeback_offered");
    black.send({ type: "takeback_accept" });
    expect((await white.next("clock_sync")).fen).toBe(START);
    // Two plies: white asks after black's reply, so both moves go.
    await play({ white, black }, ["d2d4", "d7d5"]);
    white.send({ type: "takeback_request" });
    await black.next("takeback_offered");
    black.send({ type: "takeback_accept" });
    const back = await black.next("clock_sync");
    expect(back.fen).toBe(START);
    white.send({ type: "takeback_accept" });
    expect((await white.next("error")).message).toBe("there is no takeback request to accept");
    await play({ white, black }, ["g1f3"]);
  });

  test("draw offers: declined, then accepted by agreement; resignation", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    {
      const { white, black } = await startGame(a);
      using _w = white;
      using _b = black;
      black.send({ type: "draw_accept" });
      expect((await black.next("error")).message).toBe("there is no draw offer to accept");
      white.send({ type: "draw_offer" });
      expect(await black.next("draw_offered")).toMatchObject({ from: "white" });
      black.send({ type: "draw_decline" });
      expect(await white.next("draw_declined")).toMatchObject({ from: "black" });
      black.send({ type: "draw_offer" });
      await white.next("draw_offered");
      white.send({ type: "draw_accept" });
      for (const p of [white, black])
        expect(await p.next("game_over")).toMatchObject({ result: "1/2-1/2", reason: "agreement" });
    }
    {
      const { white, black } = await startGame(a);
      using _w = white;
      using _b = black;
      white.send({ type: "resign" });
      expect(await black.next("game_over")).toMatchObject({ result: "0-1", reason: "resignation" });
    }
  });

  test.each([
    ["threefold_repetition", START, ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]],
    ["fifty_move", "k7/8/8/8/8/8/8/4K2R w K - 99 80", ["h1h2"]],
    ["stalemate", "k7/8/8/2Q5/8/8/8/7K w - - 0 1", ["c5b6"]],
    ["insufficient_material", "k7/8/8/8/8/8/p7/1K6 w - - 0 1", ["b1a2"]],
  ] as const)("a draw by %s ends the game", async (reason, fen, moves) => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a, { fen });
    using _w = white;
    using _b = black;
    const played = await play({ white, black }, [...moves]);
    // Not one move early: the position before the last move was still in play.
    expect(played.slice(0, -1).every((m) => m.legal_moves.length > 0)).toBe(true);
    for (const p of [white, black]) expect(await p.next("game_over")).toMatchObject({ result: "1/2-1/2", reason });
  });

  test("a bad query is a 400 before the upgrade; a plain GET describes the join it would make", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const token = await login(a);
    const http = (q: Record<string, string>) =>
      fetch(netchessUrl(a, token, q).replace(/^ws/, "http"), {
        headers: {
          upgrade: "websocket",
          connection: "upgrade",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          "sec-websocket-version": "13",
        },
      });
    for (const [q, text] of [
      [{ mode: "blitz" }, "mode must be quick, room or spectate"],
      [{ mode: "spectate" }, "spectate needs room=<code>"],
      [{ mode: "room", room: "x".repeat(65) }, "room must be 1-64 characters"],
      [{ initial_sec: "0" }, "initial_sec must be an integer from 1 to 10800"],
      [{ mode: "room", fen: "not a fen" }, "fen is not a valid position"],
      [
        { mode: "room", fen: "8/8/8/3kK3/8/8/8/8 w - - 0 1" },
        "fen is not a position a game can reach: the kings stand next to each other",
      ],
      [{ colour: "white" }, "unknown query parameter colour"],
    ] as const) {
      const r = await http(q);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { message: string }).message).toContain(text);
    }
    const plain = await fetch(`${a.app.coordinatorUrl}/api/v4/games/netchess`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({
      data: {
        protocol: "websocket",
        mode: "quick",
        room: null,
        color: "random",
        initial_ms: 300_000,
        increment_ms: 0,
        fen: null,
      },
    });
    expect((await fetch(netchessUrl(a, "not-a-jwt").replace(/^ws/, "http"))).status).toBe(401);
  });

  test("hello is limited per connection: the 6th in 10 s gets one error, later ones are ignored, the game goes on", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const { white, black } = await startGame(a);
    using _w = white;
    using _b = black;
    for (let i = 0; i < 8; i++) white.send({ type: "hello" });
    expect((await white.next("error")).message).toBe(
      "hello: at most 5 per 10 s on one connection; more are ignored for now",
    );
    // Frames are handled in order: once the move after the flood is confirmed, every hello was answered or dropped.
    white.move("e2e4");
    await white.next("opponent_move");
    expect(white.all("error")).toHaveLength(1);
    expect(white.all("matched")).toHaveLength(1 + 5);
  });

  test("spectating a room that does not exist is refused with an error frame", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    using s = await ChessClient.open(netchessUrl(a, await login(a), { mode: "spectate", room: "nowhere" }));
    expect((await s.next("error")).message).toBe("no room nowhere to watch");
    expect((await s.closed).code).toBe(1008);
  });

  test("with coordinator.widgets.control.games false every chess route answers 503", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path, { coordinator: { widgets: { control: { games: false } } } });
    const token = await login(a);
    const auth = { authorization: `Bearer ${token}` };
    const base = `${a.app.coordinatorUrl}/api/v4/games`;
    const answers = [
      await fetch(`${base}/netchess?mode=quick`, {
        headers: {
          ...auth,
          upgrade: "websocket",
          connection: "upgrade",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
          "sec-websocket-version": "13",
        },
      }),
      await fetch(`${base}/chess/llm-status`, { headers: auth }),
      await fetch(`${base}/chess/llm-move`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ fen: START }),
      }),
    ];
    for (const r of answers) {
      expect(r.status).toBe(503);
      expect(((await r.json()) as { message: string }).message).toContain("coordinator.widgets.control.games");
    }
  });
});
