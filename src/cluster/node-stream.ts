import { Elysia } from "elysia";
import { AppError } from "../core/index.ts";
import { STREAM_ROUTE_DESCRIPTION, parseStreamFilter, upgradeToStream, type StreamBroker } from "../stream/index.ts";
import { bearerMatches } from "./node-identity.ts";

/**
 * Node `/stream` (docs/STREAM.md "Security"): the node's broker, no
 * authentication. The node port has no credential of any kind, so every client here is anonymous
 * and never gets the raw payload: `include_payload=1` is accepted and left out (the plain GET
 * says `include_payload: false`). A client is known by its remote address, which has a share of
 * the slots (ingest.hep_stream.max_subscribers_per_address, docs/STREAM.md "Subscriber slots").
 * `history` is capped at the ring size. The node token (docs/STREAM.md "Security"): a request that
 * carries `Authorization: Bearer` (a coordinator's fan-in) is refused with 401 unless it is this
 * node's token; with `node.http_server.open_metadata` false the token is required, as for the
 * metadata, so a locked-down node still streams to its coordinator and to nobody else.
 */
export function nodeStreamRoutes(broker: StreamBroker, auth: { token?: string; required?: boolean } = {}) {
  return new Elysia({ name: "svc-node-stream" }).get(
    "/stream",
    ({ request, server }) => {
      const given = request.headers.get("authorization");
      if (auth.token !== undefined && (given !== null || auth.required) && !bearerMatches(given, auth.token)) {
        throw new AppError(
          "UNAUTHORIZED",
          "this node's /stream needs Authorization: Bearer <node.http_server.token> (the coordinator's coordinator.nodes[].token)",
        );
      }
      const asked = parseStreamFilter(new URL(request.url).searchParams, { historyLimit: broker.config.buffer_size });
      const address = server?.requestIP(request)?.address ?? "unknown";
      return upgradeToStream(
        server,
        request,
        broker,
        { ...asked, includePayload: false },
        { kind: "anonymous", address },
      );
    },
    {
      detail: {
        summary:
          "Live HEP events of this node (WebSocket, no authentication and no payload: bind the node port to loopback or firewall it)",
        description: STREAM_ROUTE_DESCRIPTION,
      },
    },
  );
}
