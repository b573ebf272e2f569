/**
 * `GET /games/chess/llm-status` and `POST /games/chess/llm-move` (docs/GAMES.md
 * "Chess vs the model") against a local OpenAI-compatible server on
 * loopback: a legal answer is played (`source` llm); an illegal move, non-JSON, an HTTP error or
 * no answer in `mcp.llm.timeout_sec` gives the greedy fallback; a bad FEN is a 400.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Chess } from "chess.js";
import type { TestAppliance } from "../appliance.ts";
import { tempDir, type TempDir } from "../harness.ts";
import { login, startChessAppliance } from "./netchess-helpers.ts";

type Mode = { kind: "answer"; content: string } | { kind: "status"; status: number } | { kind: "silent" };
let mode: Mode = { kind: "answer", content: "{}" };
const seen: Array<{
  path: string;
  auth: string | null;
  body: { model: string; messages: Array<{ role: string; content: string }>; response_format?: unknown };
}> = [];

const provider = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    seen.push({
      path: new URL(req.url).pathname,
      auth: req.headers.get("authorization"),
      body: (await req.json()) as (typeof seen)[number]["body"],
    });
    if (mode.kind === "status") return new Response("overloaded", { status: mode.status });
    if (mode.kind === "silent") await new Promise((r) => setTimeout(r, 5000));
    const content = mode.kind === "answer" ? mode.content : "";
    return Response.json({
      id: "x",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    });
  },
});

/** White's pawn on e4 can take the black queen on d5: the greedy fallback plays exactly e4d5. */
const HANGING_QUEEN = "4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1";
const AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

let dir: TempDir;
let a: TestAppliance;
let token: string;
beforeAll(async () => {
  dir = tempDir();
  a = await startChessAppliance(dir.path, {
    mcp: {
      llm: {
        enable: true,
        base_url: `http://127.0.0.1:${provider.port}/v1/`,
        api_key: "test-key-123",
        model: "chess-test-model",
        timeout_sec: 1,
      },
    },
  });
  token = await login(a);
});
afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
  provider.stop(true);
});

const move = async (body: unknown) => {
  const r = await fetch(`${a.app.coordinatorUrl}/api/v4/games/chess/llm-move`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
};

describe("chess against the language model", () => {
  test("llm-status says enabled when mcp.llm is on", async () => {
    const r = await fetch(`${a.app.coordinatorUrl}/api/v4/games/chess/llm-status`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await r.json()).toEqual({ enabled: true });
  });

  test("a legal answer is played as the model's move; the request carries the fixed prompt, the position and the key", async () => {
    mode = { kind: "answer", content: '{"move": "E7E5"}' };
    seen.length = 0;
    const r = await move({ fen: AFTER_E4 });
    expect(r.status).toBe(200);
    const after = new Chess(AFTER_E4);
    after.move("e5");
    expect(r.json).toEqual({ uci: "e7e5", san: "e5", fen: after.fen(), source: "llm" });
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.auth).toBe("Bearer test-key-123");
    expect(req.body.model).toBe("chess-test-model");
    expect(req.body.response_format).toEqual({ type: "json_object" });
    expect(req.body.messages[0]!.role).toBe("system");
    expect(req.body.messages[0]!.content).toContain('{"move": "<uci>"}');
    expect(req.body.messages[1]!.content).toContain(AFTER_E4);
    expect(req.body.messages[1]!.content).toContain("e7e5");
  });

  test.each([
    [
      "an illegal move",
      { kind: "answer", content: '{"move": "e4e6"}' },
      "the model's move e4e6 is not legal in this position",
    ],
    ["a move that is not UCI", { kind: "answer", content: '{"move": "Qxd5"}' }, "no move in UCI notation"],
    [
      "text that is not JSON",
      { kind: "answer", content: "I take the queen: e4d5!" },
      "did not answer with a JSON object",
    ],
    ["an HTTP error", { kind: "status", status: 500 }, "answered HTTP 500"],
    ["no answer within timeout_sec", { kind: "silent" }, "no answer within 1 s"],
  ] as const)("%s gives the greedy fallback", async (_name, m, reason) => {
    mode = m;
    seen.length = 0;
    const r = await move({ fen: HANGING_QUEEN });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ uci: "e4d5", san: "exd5", source: "fallback" });
    expect(r.json.reason).toContain(reason);
    expect(seen).toHaveLength(1);
  });

  test("the fallback prefers mate, then the biggest capture, and is the same every time", async () => {
    mode = { kind: "status", status: 503 };
    // Qh5xf7 is mate (scholar's mate) and outranks the capture of the e5 pawn by the same queen.
    const r = await move({ fen: "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4" });
    expect(r.json).toMatchObject({ uci: "h5f7", san: "Qxf7#", source: "fallback" });
    const again = await move({ fen: "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4" });
    expect(again.json.uci).toBe("h5f7");
  });

  test("a bad or finished position is a 400 with the reason", async () => {
    for (const [body, text] of [
      [{ fen: "not a fen" }, "fen is not a valid position"],
      [{ fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1" }, "fen is not a valid position"],
      [
        { fen: "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3" },
        "the game is over in this position (checkmate)",
      ],
      // Positions no game can reach: the fallback would answer with a king capture or a move of the wrong side.
      [{ fen: "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1" }, "black is in check but it is white's move"],
      [{ fen: "8/8/8/3kK3/8/8/8/8 w - - 0 1" }, "the kings stand next to each other"],
      [{ fen: "4k3/8/8/8/8/2b5/8/r3K2r w - - 0 1" }, "the white king is in check from 3 pieces"],
      [{ fen: "4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1" }, "black has 9 pawns"],
      [{ fen: "4k3/8/8/8/8/8/8/4K3 w K - 0 1" }, "castling right K needs the white king on e1 and a white rook on h1"],
      [{ fen: "4k3/8/8/8/8/8/8/4K3 w - - 0 1" }, "the game is over in this position (insufficient material)"],
      [{ fen: "4k3/8/8/8/8/8/4R3/4K3 b - - 100 80" }, "the game is over in this position (fifty-move rule)"],
      [{}, "fen"],
    ] as const) {
      const r = await move(body);
      expect(r.status).toBe(400);
      expect(String(r.json.message)).toContain(text);
    }
  });
});

describe("chess without the language model", () => {
  test("llm-status says disabled and every move comes from the fallback without calling a provider", async () => {
    await using d = tempDir();
    await using off = await startChessAppliance(d.path, {
      mcp: { llm: { enable: false, base_url: `http://127.0.0.1:${provider.port}/v1` } },
    });
    const t = await login(off);
    const status = await fetch(`${off.app.coordinatorUrl}/api/v4/games/chess/llm-status`, {
      headers: { authorization: `Bearer ${t}` },
    });
    expect(await status.json()).toEqual({ enabled: false });
    seen.length = 0;
    const r = await fetch(`${off.app.coordinatorUrl}/api/v4/games/chess/llm-move`, {
      method: "POST",
      headers: { authorization: `Bearer ${t}`, "content-type": "application/json" },
      body: JSON.stringify({ fen: HANGING_QUEEN }),
    });
    expect(await r.json()).toMatchObject({
      uci: "e4d5",
      source: "fallback",
      reason: "the language model is not enabled (mcp.llm.enable)",
    });
    expect(seen).toHaveLength(0);
  });
});
