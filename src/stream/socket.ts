import type { Server, ServerWebSocket } from "bun";
import { AppError } from "../core/index.ts";
import type { StreamFilter } from "./filter.ts";
import type { StreamSource, StreamSubscription } from "./broker.ts";
import { CLOSE, type Outlet } from "./outbox.ts";
import type { StreamCaller } from "./slots.ts";

/**
 * The WebSocket side of both stream endpoints. The route checks the filter first (400 before the
 * upgrade), then upgrades; the subscription is made when the socket opens, and a subscriber over
 * the cap is closed at once with 1013 and the reason (browsers cannot read an HTTP error body of
 * a refused handshake, but they do get the close reason). Frames from clients are ignored.
 *
 * Elysia's Bun adapter installs one websocket handler for the server that calls the `open`,
 * `message`, `drain` and `close` members of each socket's `data` (elysia/dist/ws): a plain GET
 * route can upgrade with its own handlers, and appears in the OpenAPI description.
 */
export interface SocketHandlers {
  open(ws: ServerWebSocket<SocketHandlers>): void;
  message(ws: ServerWebSocket<SocketHandlers>, message: string | Buffer): void;
  drain(ws: ServerWebSocket<SocketHandlers>): void;
  close(ws: ServerWebSocket<SocketHandlers>, code: number, reason: string): void;
}

export function socketOutlet(ws: ServerWebSocket<unknown>): Outlet {
  return {
    send(frame) {
      const n = ws.send(frame);
      return n > 0 ? "sent" : n === -1 ? "backpressure" : "closed";
    },
    close: (code, reason) => ws.close(code, reason),
  };
}

/** What both stream routes say about themselves in the API description. */
export const STREAM_ROUTE_DESCRIPTION = [
  "WebSocket (GET with Upgrade: websocket). Each text frame is one JSON HEP event: ts (epoch ms), proto, src_ip, src_port, dst_ip, dst_port, node_id, sip {method, resp_code, resp_text, callid, cseq, from_user, to_user, ruri_user} for decoded SIP, payload when allowed.",
  "Query: proto (repeatable, 0-255), method (repeatable SIP method), callid (repeatable SIP Call-ID, exact), only_requests=1, include_payload=1, history=N (buffered matching events replayed first).",
  "400 before the upgrade for an unknown parameter or value; a subscriber over ingest.hep_stream.max_subscribers or over its share (max_subscribers_per_address, max_subscribers_per_user) is closed at once with code 1013 and the reason; an administrator takes the slot of the oldest anonymous subscriber instead.",
  "A plain GET (no Upgrade header) answers 200 with the filter this caller would get (caps and payload policy applied), to check credentials and filter first.",
].join(" ");

/** The request asks for a WebSocket (a plain GET of the same route describes it instead). */
export const isUpgrade = (request: Request) => request.headers.get("upgrade")?.toLowerCase() === "websocket";

/**
 * Upgrades with per-socket handlers, which Elysia's Bun adapter calls (see SocketHandlers); a
 * handshake Bun refuses is the client's mistake, a 400.
 */
export function upgradeSocket(server: Server<unknown>, request: Request, handlers: SocketHandlers): void {
  if (!server.upgrade(request, { data: handlers }))
    throw new AppError(
      "BAD_REQUEST",
      "the WebSocket handshake failed (check the Sec-WebSocket-Key and Sec-WebSocket-Version headers)",
    );
}

/** A client of a relay of JSON text frames (the games): each frame goes out as one JSON text. */
export interface JsonPeer<F> {
  send(frame: F): void;
  close(code: number, reason: string): void;
}

/** What a relay answers for one opened socket: the client's text frames, and the socket's close. */
export interface RelaySocket {
  message(text: string): void;
  close(): void;
}

/**
 * Upgrades to a relay of JSON text frames (the games, docs/GAMES.md) with per-socket handlers (see
 * SocketHandlers): `join` when the socket opens, each text frame of the client to what it returned,
 * then its close. A binary frame is read as UTF-8 text, unless `onBinary` answers it instead.
 */
export function upgradeToRelay<F>(
  server: Server<unknown>,
  request: Request,
  join: (peer: JsonPeer<F>) => RelaySocket | undefined,
  onBinary?: (peer: JsonPeer<F>) => void,
): void {
  let socket: RelaySocket | undefined;
  const peerOf = (ws: ServerWebSocket<SocketHandlers>): JsonPeer<F> => ({
    send: (f) => void ws.send(JSON.stringify(f)),
    close: (code, reason) => ws.close(code, reason),
  });
  upgradeSocket(server, request, {
    open(ws) {
      socket = join(peerOf(ws));
    },
    message(ws, message) {
      if (typeof message !== "string" && onBinary) onBinary(peerOf(ws));
      else socket?.message(typeof message === "string" ? message : message.toString("utf8"));
    },
    drain() {},
    close() {
      socket?.close();
      socket = undefined;
    },
  });
}

/** Reasons a close frame may carry: at most 123 bytes (RFC 6455 section 5.5). */
export function closeReason(text: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= 123) return text;
  return `${new TextDecoder().decode(bytes.subarray(0, 120)).replace(/\uFFFD+$/, "")}...`;
}

/** What a plain GET (no WebSocket handshake) answers: the filter this caller would get, caps and payload policy applied. */
export interface StreamDescription {
  data: {
    protocol: "websocket";
    filter: {
      proto: number[];
      method: string[];
      callid: string[];
      only_requests: boolean;
      include_payload: boolean;
      history: number;
    };
  };
}

export function describeStream(f: StreamFilter): StreamDescription {
  return {
    data: {
      protocol: "websocket",
      filter: {
        proto: [...(f.protos ?? [])],
        method: [...(f.methods ?? [])],
        callid: [...(f.callIds ?? [])],
        only_requests: f.onlyRequests,
        include_payload: f.includePayload,
        history: f.history,
      },
    },
  };
}

/**
 * Upgrades `request` to a stream of `source` under `filter` (the caller already threw 400 for a
 * bad filter). A plain GET gets the description instead: clients check their credentials and
 * filter with it before opening the WebSocket, whose refused handshake would tell them nothing.
 */
export function upgradeToStream(
  server: Server<unknown> | null | undefined,
  request: Request,
  source: StreamSource,
  filter: StreamFilter,
  caller: StreamCaller,
): StreamDescription | undefined {
  if (!server || !isUpgrade(request)) return describeStream(filter);
  let sub: StreamSubscription | undefined;
  const handlers: SocketHandlers = {
    open(ws) {
      const r = source.subscribe(filter, socketOutlet(ws), caller);
      if (r.ok) sub = r.value;
      else
        ws.close(r.reason === "unavailable" ? CLOSE.internal : CLOSE.tryAgainLater, closeReason(r.detail ?? r.reason));
    },
    message() {},
    drain() {
      sub?.outbox.drain();
    },
    close() {
      sub?.close();
      sub = undefined;
    },
  };
  upgradeSocket(server, request, handlers);
  return undefined;
}
