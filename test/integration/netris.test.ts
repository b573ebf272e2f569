/**
 * The Netris relay end to end (docs/GAMES.md "Netris", "States"):
 * real appliance on 127.0.0.1:0, real JWTs of three users, players on the npm `ws` client. The
 * 60 s wait is tested with a fake clock in src/games/netris/hub.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { connectPlayer, startedGame, startNetrisServer } from "./netris-helpers.ts";

const EMPTY = ".".repeat(10);
const board = (filled: number) => [
  ...Array.from({ length: 20 - filled }, () => EMPTY),
  ...Array.from({ length: filled }, () => "#########."),
];

describe("Netris relay", () => {
  test("a named room pairs two players; a third and a second seat of the same user are refused", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    using a = connectPlayer(s.url("alice", "room=lobby-1&display=%20Alice%09%20the%0A%20Great%20"));
    expect(await a.next("waiting")).toEqual({
      type: "waiting",
      room: "lobby-1",
      you: "Alice the Great",
      timeout_ms: 60_000,
    });
    using again = connectPlayer(s.url("alice", "room=lobby-1"));
    expect((await again.next("error")).message).toContain("already in room");
    expect((await again.closed).code).toBe(1008);
    using b = connectPlayer(s.url("bob", "room=lobby-1"));
    expect(await a.next("matched")).toEqual({
      type: "matched",
      room: "lobby-1",
      you: "Alice the Great",
      opponent: "bob",
    });
    expect(await b.next("matched")).toEqual({
      type: "matched",
      room: "lobby-1",
      you: "bob",
      opponent: "Alice the Great",
    });
    using c = connectPlayer(s.url("carol", "room=lobby-1"));
    expect((await c.next("error")).message).toBe('room "lobby-1" is full: a Netris room holds 2 players');
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(c.types()).toEqual(["error"]);
    // The two players are untouched by the refused third.
    a.send({ type: "ready" });
    expect(await b.next("ready")).toEqual({ type: "ready", from: "opponent" });
    expect(await a.next("ready")).toEqual({ type: "ready", from: "you" });
    b.send({ type: "ready" });
    const [sa, sb] = await Promise.all([a.next("start"), b.next("start")]);
    expect(sa.seed).toBe(sb.seed as number);
    expect(typeof sa.seed).toBe("number");
  });

  test("a binary frame is answered with an error frame; the seat stays and is paired", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    using a = connectPlayer(s.url("alice", "room=binary-1"));
    await a.next("waiting");
    a.sendBinary(new TextEncoder().encode(JSON.stringify({ type: "ready" })));
    expect((await a.next("error")).message).toBe("frames are JSON text, not binary");
    using _b = connectPlayer(s.url("bob", "room=binary-1"));
    expect((await a.next("matched")).opponent).toBe("bob");
    expect(a.types()).toEqual(["waiting", "error", "matched"]);
  });

  test("mode=quick pairs first in, first out, never a user with themself", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    using a1 = connectPlayer(s.url("alice", "mode=quick"));
    const w1 = await a1.next("waiting");
    using a2 = connectPlayer(s.url("alice", "mode=quick"));
    const w2 = await a2.next("waiting");
    expect(w1.room).not.toBe(w2.room as string);
    using b = connectPlayer(s.url("bob", "mode=quick"));
    const mb = await b.next("matched");
    expect(mb.room).toBe(w1.room as string);
    expect((await a1.next("matched")).opponent).toBe("bob");
    using c = connectPlayer(s.url("carol", "mode=quick&display=Carol"));
    expect((await c.next("matched")).room).toBe(w2.room as string);
    expect(await a2.next("matched")).toEqual({ type: "matched", room: w2.room, you: "alice", opponent: "Carol" });
    expect(b.types()).toEqual(["matched"]);
  });

  test("line clears send garbage by the table (1→0, 2→1, 3→2, 4→4) with one hole per burst; boards are relayed", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    const [a, b] = await startedGame(s, "garbage");
    using _a = a;
    using _b = b;
    for (const lines of [1, 2, 3, 4]) {
      a.send({ type: "line_clear", lines });
      expect(await a.next("line_clear")).toEqual({ type: "line_clear", lines, garbage: [0, 0, 1, 2, 4][lines]! });
    }
    b.send({ type: "line_clear", lines: 4 });
    const bursts = [await b.next("garbage_in"), await b.next("garbage_in"), await b.next("garbage_in")];
    expect(bursts.map((f) => f.lines)).toEqual([1, 2, 4]);
    for (const f of bursts) {
      expect(Object.keys(f).sort()).toEqual(["hole", "lines", "type"]);
      expect(Number.isInteger(f.hole) && (f.hole as number) >= 0 && (f.hole as number) <= 9).toBe(true);
    }
    expect((await a.next("garbage_in")).lines).toBe(4);
    // Nothing for the single line: exactly three bursts reached b.
    expect(b.types().filter((t) => t === "garbage_in").length).toBe(3);
    a.send({ type: "board", rows: board(3) });
    expect(await b.next("opponent_board")).toEqual({ type: "opponent_board", rows: board(3) });
    // Bad frames are refused with an error and change nothing; the game goes on.
    a.send({ type: "line_clear", lines: 5 });
    expect((await a.next("error")).message).toContain("1-4");
    a.send({ type: "board", rows: ["x"] });
    expect((await a.next("error")).message).toContain("20 strings");
    a.sendRaw("not json");
    expect((await a.next("error")).message).toContain("JSON object");
    a.send({ type: "jump" });
    expect((await a.next("error")).message).toContain('unknown frame type "jump"');
    a.send({ type: "line_clear", lines: 2 });
    expect((await b.next("garbage_in")).lines).toBe(1);
    expect(b.types().filter((t) => t === "garbage_in").length).toBe(4);
  });

  test("a player who tops out loses, the other wins; both are closed", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    const [a, b] = await startedGame(s, "topout");
    using _a = a;
    using _b = b;
    b.send({ type: "top_out" });
    expect(await a.next("game_over")).toEqual({ type: "game_over", result: "win", reason: "opponent_top_out" });
    expect(await b.next("game_over")).toEqual({ type: "game_over", result: "lose", reason: "top_out" });
    expect((await a.closed).code).toBe(1000);
    expect((await b.closed).code).toBe(1000);
    // The room is gone: the same code starts a new wait.
    using again = connectPlayer(s.url("carol", "room=topout"));
    expect((await again.next("waiting")).room).toBe("topout");
  });

  test("a player who leaves while playing: the other is told opponent_left and wins", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    const [a, b] = await startedGame(s, "leave");
    using _b = b;
    a.close();
    expect(await b.next("opponent_left")).toEqual({ type: "opponent_left" });
    expect(await b.next("game_over")).toEqual({ type: "game_over", result: "win", reason: "opponent_left" });
    expect(b.types().slice(-2)).toEqual(["opponent_left", "game_over"]);
    expect((await b.closed).code).toBe(1000);
  });

  test("a player who leaves before the start: opponent_left, nobody wins", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    using a = connectPlayer(s.url("alice", "room=early"));
    await a.next("waiting");
    using b = connectPlayer(s.url("bob", "room=early"));
    await b.next("matched");
    a.close();
    await b.next("opponent_left");
    expect((await b.closed).code).toBe(1000);
    expect(b.types()).toEqual(["matched", "opponent_left"]);
  });

  test("bad queries are 400 before the upgrade, no token is 401, a plain GET describes the join", async () => {
    await using dir = tempDir();
    await using s = await startNetrisServer(dir.path);
    const UPGRADE = {
      upgrade: "websocket",
      connection: "upgrade",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    };
    const get = async (query: string, token: string | null = s.tokens.alice) =>
      await s.server.fetch("GET", `/games/netris?${query}`, token ? { token, headers: UPGRADE } : { headers: UPGRADE });
    for (const [query, text] of [
      [`room=${"r".repeat(65)}`, "room is 1-64"],
      ["room=a%20b", "letters, digits"],
      [`room=x&display=${"d".repeat(33)}`, "display is at most 32"],
      ["room=x&mode=quick", "either room"],
      ["", "either room"],
      ["mode=fast", "mode must be"],
      ["room=x&colour=red", "unknown parameter"],
    ] as const) {
      const r = await get(query);
      expect({ query, status: r.status, ok: r.text.includes(text) }).toEqual({ query, status: 400, ok: true });
    }
    // A 32-character label after sanitising is accepted (tabs and repeated spaces collapse).
    using ok = connectPlayer(
      s.url("alice", `room=x&display=${encodeURIComponent(`${"d".repeat(16)}\t\t  ${"e".repeat(15)}`)}`),
    );
    expect((await ok.next("waiting")).you).toBe(`${"d".repeat(16)} ${"e".repeat(15)}`);
    expect((await get("room=x", null)).status).toBe(401);
    const plain = await s.server.fetch("GET", "/games/netris?room=x&display=%20Al%20%20", { token: s.tokens.alice });
    expect(plain.json).toEqual({ data: { protocol: "websocket", mode: "room", room: "x", display: "Al" } });
    const quick = await s.server.fetch("GET", "/games/netris?mode=quick", { token: s.tokens.bob });
    expect(quick.json).toEqual({ data: { protocol: "websocket", mode: "quick", room: null, display: "bob" } });
  });
});
