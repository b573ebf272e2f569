import { isUpgrade, upgradeToRelay } from "../../stream/index.ts";
import { Chess } from "chess.js";
import { Elysia, t, type AnyElysia } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import { AppError, type Module } from "../../core/index.ts";
import {
  chooseMove,
  llmEnabled,
  NetChessRelay,
  parseJoin,
  positionProblem,
  type ChessLlmConfig,
  type JoinRequest,
  type RelayOptions,
  type ServerFrame,
} from "../../games/index.ts";
import { authContext, authOf } from "../auth/guard.ts";
import { errorBody } from "../errors.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";

/**
 * The chess routes (docs/GAMES.md): the `/games/netchess` relay (WebSocket) and the model's move
 * for the single-player Chess widget. With `coordinator.widgets.control.games` false every one of
 * them answers 503 (docs/API.md "Errors").
 */
export interface ChessRouteDeps {
  /** `coordinator.widgets.control.games`. */
  games: boolean;
  /** `mcp.llm`: the model the Chess widget plays against. */
  llm: ChessLlmConfig;
  relay?: RelayOptions;
}

const ERROR = ErrorResponse as OpenAPIV3.SchemaObject;
const FEN_MAX = 100;

const NETCHESS_PARAMETERS: OpenAPIV3.ParameterObject[] = [
  {
    name: "mode",
    in: "query",
    required: false,
    description:
      "quick (first-in-first-out pairing; the default without room), room (the default with room), spectate (read-only, up to 8 per room)",
    schema: { type: "string", enum: ["quick", "room", "spectate"] },
  },
  {
    name: "room",
    in: "query",
    required: false,
    description: "room code to create or join; mode=room without it creates a random 6-letter code",
    schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
  },
  {
    name: "color",
    in: "query",
    required: false,
    description: "colour wish of the room's first player (the second takes the other)",
    schema: { type: "string", enum: ["white", "black", "random"] },
  },
  {
    name: "initial_sec",
    in: "query",
    required: false,
    description: "time per player, set by the room's first joiner (default 300)",
    schema: { type: "integer", minimum: 1, maximum: 10800 },
  },
  {
    name: "increment_sec",
    in: "query",
    required: false,
    description: "seconds added after each move, set by the first joiner (default 0)",
    schema: { type: "integer", minimum: 0, maximum: 180 },
  },
  {
    name: "fen",
    in: "query",
    required: false,
    description: "start position of a room its creator opens (mode=room)",
    schema: { type: "string", maxLength: FEN_MAX },
  },
  {
    name: "display",
    in: "query",
    required: false,
    description: "label shown to the opponent (at most 32 characters after sanitising; default the username)",
    schema: { type: "string" },
  },
  {
    name: "access_token",
    in: "query",
    required: false,
    description: "the JWT, for WebSocket clients that cannot set headers",
    schema: { type: "string" },
  },
];

/**
 * The 503 of a switched-off feature is the administrator's choice, not a server fault: its message
 * is kept (the error handler replaces the text of UNAVAILABLE errors with a generic one).
 */
const GAMES_OFF = errorBody("UNAVAILABLE", "games are switched off on this server (coordinator.widgets.control.games)");
const gamesOff = (set: { status?: number | string }) => {
  set.status = 503;
  return GAMES_OFF;
};

const MoveBody = t.Object(
  { fen: t.String({ minLength: 1, maxLength: FEN_MAX, description: "the position, side to move included (FEN)" }) },
  { additionalProperties: false },
);

const MoveAnswer = t.Object({
  uci: t.String({ description: "the move in UCI notation (e2e4, e7e8q)" }),
  san: t.String({ description: "the move in standard algebraic notation" }),
  fen: t.String({ description: "the position after the move" }),
  source: t.Union([t.Literal("llm"), t.Literal("fallback")], {
    description: "llm: the model's move; fallback: the server's greedy choice",
  }),
  reason: t.Optional(t.String({ description: "why the model's move was not used (fallback only)" })),
});

/** What a plain GET answers: the join the WebSocket would make with this query. */
function describeJoin(j: JoinRequest) {
  return {
    data: {
      protocol: "websocket" as const,
      mode: j.mode,
      room: j.room ?? null,
      color: j.color,
      initial_ms: j.initialMs,
      increment_ms: j.incrementMs,
      fen: j.fen ?? null,
    },
  };
}

const JoinDescription: OpenAPIV3.SchemaObject = {
  type: "object",
  required: ["data"],
  properties: {
    data: {
      type: "object",
      required: ["protocol", "mode", "room", "color", "initial_ms", "increment_ms", "fen"],
      properties: {
        protocol: { type: "string", enum: ["websocket"] },
        mode: { type: "string", enum: ["quick", "room", "spectate"] },
        room: { type: "string", nullable: true, description: "null: quick pairing or a random code made at join" },
        color: { type: "string", enum: ["white", "black", "random"] },
        initial_ms: { type: "integer" },
        increment_ms: { type: "integer" },
        fen: { type: "string", nullable: true },
      },
    },
  },
};

/** The chess routes and the module that ends every room when the coordinator stops. */
export function chessRoutes(deps: ChessRouteDeps): { plugin: AnyElysia; module: Module } {
  const relay = new NetChessRelay(deps.relay);
  const plugin = new Elysia({ name: "svc-games-chess" })
    .use(authContext)
    .get(
      "/games/netchess",
      ({ request, server, set }) => {
        if (!deps.games) return gamesOff(set);
        const auth = authOf(request);
        const join = parseJoin(new URL(request.url).searchParams);
        if (!join.ok) throw new AppError("BAD_REQUEST", join.reason);
        // A plain GET checks credentials and query first (a refused WebSocket handshake tells a browser nothing).
        if (!isUpgrade(request) || !server) return describeJoin(join.value);
        upgradeToRelay<ServerFrame>(server, request, (peer) => relay.join(join.value, auth.username, peer));
        return undefined;
      },
      {
        detail: {
          tags: ["Games"],
          summary:
            "NetChess relay (WebSocket): quick pairing, rooms, spectators; the server holds the game and the clocks",
          description:
            "JSON text frames with a `type` member; the frame list is in docs/GAMES.md (NetChess). A query the relay cannot use is a 400 before the upgrade.",
          parameters: NETCHESS_PARAMETERS,
          responses: {
            101: { description: "switched to the WebSocket protocol" },
            200: {
              description:
                "a plain GET (no Upgrade header): the join this query would make, to check credentials and query first",
              content: { "application/json": { schema: JoinDescription } },
            },
            400: { description: "bad query", content: { "application/json": { schema: ERROR } } },
            401: { description: "no or invalid credentials", content: { "application/json": { schema: ERROR } } },
            503: {
              description: "games are switched off (coordinator.widgets.control.games)",
              content: { "application/json": { schema: ERROR } },
            },
          },
        },
      },
    )
    .get(
      "/games/chess/llm-status",
      ({ set }) => {
        if (!deps.games) return gamesOff(set);
        return { enabled: llmEnabled(deps.llm) };
      },
      {
        detail: {
          tags: ["Games"],
          summary: "Whether the Chess widget plays the language model (mcp.llm) or only the server's greedy fallback",
        },
        response: { 200: t.Object({ enabled: t.Boolean() }), 503: ErrorResponse, ...errors(401) },
      },
    )
    .post(
      "/games/chess/llm-move",
      async ({ body, set }) => {
        if (!deps.games) return gamesOff(set);
        // An unreachable or finished position is the client's mistake (docs/GAMES.md "Chess vs the model").
        const problem = positionProblem(body.fen);
        if (problem) throw new AppError("BAD_REQUEST", problem);
        return await chooseMove(new Chess(body.fen), deps.llm);
      },
      {
        body: MoveBody,
        detail: {
          tags: ["Games"],
          summary:
            "A legal move for the side to move: the model's (fixed chess prompt) when it names a legal one, else the server's greedy choice",
        },
        response: { 200: MoveAnswer, 503: ErrorResponse, ...errors(400, 401) },
      },
    );
  return {
    plugin,
    module: { name: "netchess-relay", start: async () => {}, stop: async () => relay.closeAll() },
  };
}
