import { isUpgrade, upgradeToRelay } from "../../stream/index.ts";
import { Elysia } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import { AppError } from "../../core/index.ts";
import { NetrisHub, type NetrisJoinRequest as JoinRequest, type NetrisServerFrame } from "../../games/index.ts";
import { authOf } from "../auth/guard.ts";
import { ErrorResponse } from "../openapi/schemas.ts";

export const MAX_ROOM_CHARS = 64;
export const MAX_DISPLAY_CHARS = 32;
const ROOM = /^[A-Za-z0-9._-]+$/;
const PARAMS = ["room", "mode", "display", "access_token"];

const bad = (message: string, param: string) => new AppError("VALIDATION", message, { details: { fields: [param] } });

/** Control and format characters out, runs of white space to one space, trimmed (docs/GAMES.md). */
export function sanitiseDisplay(raw: string): string {
  return raw
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** The query of `GET /games/netris` (docs/GAMES.md "Netris"); 400 naming the first bad parameter. */
export function parseNetrisQuery(params: URLSearchParams, username: string): JoinRequest {
  for (const k of new Set(params.keys())) {
    if (!PARAMS.includes(k)) throw bad(`unknown parameter "${k}": Netris takes room, mode=quick and display`, k);
    if (params.getAll(k).length > 1) throw bad(`${k} may be given once`, k);
  }
  const room = params.get("room");
  const mode = params.get("mode");
  if (mode !== null && mode !== "quick") throw bad(`mode must be "quick", got "${mode}"`, "mode");
  if ((room === null) === (mode === null))
    throw bad(
      "give either room=<code> (a named room) or mode=quick (first-in-first-out pairing)",
      room === null ? "room" : "mode",
    );
  if (room !== null) {
    if (room.length === 0 || [...room].length > MAX_ROOM_CHARS)
      throw bad(`room is 1-${MAX_ROOM_CHARS} characters`, "room");
    if (!ROOM.test(room)) throw bad("room may contain letters, digits, '.', '_' and '-'", "room");
  }
  const display = sanitiseDisplay(params.get("display") ?? "");
  if ([...display].length > MAX_DISPLAY_CHARS)
    throw bad(
      `display is at most ${MAX_DISPLAY_CHARS} characters (after removing control characters and extra spaces)`,
      "display",
    );
  return { username, display: display || username, ...(room !== null ? { room } : {}) };
}

const ERROR = ErrorResponse as OpenAPIV3.SchemaObject;
const DISABLED = "games are disabled on this server (coordinator.widgets.control.games is false)";

/**
 * `GET /games/netris` (docs/GAMES.md "Netris"). The guard has already
 * authenticated the caller (header, cookie or `?access_token=`; WEBSOCKET_ROUTES). With games off
 * the relay is not started and the route answers 503. The socket is src/stream/socket.ts's relay
 * (upgradeToRelay), as NetChess's.
 */
export function netrisRoutes(opts: { enabled: boolean; hub?: NetrisHub }) {
  const hub = opts.enabled ? (opts.hub ?? new NetrisHub()) : undefined;
  return new Elysia({ name: "svc-netris" }).get(
    "/games/netris",
    ({ request, server }) => {
      // Said as it is (no request id): a switch the administrator set, not a fault to look up.
      if (!hub)
        return new Response(JSON.stringify({ error: "UNAVAILABLE", message: DISABLED }), {
          status: 503,
          headers: { "content-type": "application/json; charset=utf-8" },
        });
      const auth = authOf(request);
      const join = parseNetrisQuery(new URL(request.url).searchParams, auth.username);
      // A plain GET checks credentials and query first (a refused handshake tells a browser nothing).
      if (!server || !isUpgrade(request)) {
        return {
          data: {
            protocol: "websocket" as const,
            mode: join.room === undefined ? ("quick" as const) : ("room" as const),
            room: join.room ?? null,
            display: join.display,
          },
        };
      }
      upgradeToRelay<NetrisServerFrame>(
        server,
        request,
        (peer) => {
          const seat = hub.join(join, peer);
          return seat && { message: (text) => seat.message(text), close: () => seat.leave() };
        },
        (peer) => peer.send({ type: "error", message: "frames are JSON text, not binary" }),
      );
      return undefined;
    },
    {
      detail: {
        tags: ["Games"],
        summary: "Netris two-player relay (WebSocket)",
        description:
          'WebSocket (GET with Upgrade: websocket), JSON text frames; the frame list is in docs/GAMES.md "Netris". Query: room=<code> (1-64 of letters, digits, . _ -) or mode=quick (first-in-first-out pairing), display=<label> (at most 32 characters after sanitising; default the username). Capacity 2: a third player gets an error frame and is closed (1008). A lone player gets waiting_timeout after 60 s. 503 when coordinator.widgets.control.games is false.',
        parameters: [
          {
            name: "room",
            in: "query",
            required: false,
            description: "named room to join or create (1-64 characters: letters, digits, . _ -)",
            schema: { type: "string", maxLength: MAX_ROOM_CHARS },
          },
          {
            name: "mode",
            in: "query",
            required: false,
            description: "quick: first-in-first-out pairing with the next player of another username",
            schema: { type: "string", enum: ["quick"] },
          },
          {
            name: "display",
            in: "query",
            required: false,
            description:
              "label shown to the opponent, at most 32 characters after sanitising; matchmaking uses the JWT username",
            schema: { type: "string" },
          },
          {
            name: "access_token",
            in: "query",
            required: false,
            description: "the JWT, for WebSocket clients that cannot set headers",
            schema: { type: "string" },
          },
        ],
        responses: {
          101: { description: "switched to the WebSocket protocol" },
          200: {
            description:
              "a plain GET (no Upgrade header): what this join would be, to check credentials and query first",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["data"],
                  properties: {
                    data: {
                      type: "object",
                      required: ["protocol", "mode", "room", "display"],
                      properties: {
                        protocol: { type: "string", enum: ["websocket"] },
                        mode: { type: "string", enum: ["room", "quick"] },
                        room: { type: "string", nullable: true },
                        display: { type: "string" },
                      },
                    },
                  },
                },
              },
            },
          },
          400: { description: "bad parameter", content: { "application/json": { schema: ERROR } } },
          401: { description: "no or invalid credentials", content: { "application/json": { schema: ERROR } } },
          503: {
            description: "games are disabled (coordinator.widgets.control.games is false)",
            content: { "application/json": { schema: ERROR } },
          },
        },
      },
    },
  );
}
