import { Elysia } from "elysia";
import { STREAM_ROUTE_DESCRIPTION, parseStreamFilter, upgradeToStream, type StreamBroker } from "../stream/index.ts";

/**
 * Node `/stream` (spec doc 2 "Live stream"): the node's broker, no authentication (firewall the
 * node port; docs/STREAM.md). `include_payload=1` is honoured as asked: the node port is the
 * trusted internal side the coordinator fans in from, and the coordinator applies the payload
 * policy (allow_payload, admin JWT) to its own clients. `history` is capped at the ring size.
 */
export function nodeStreamRoutes(broker: StreamBroker) {
  return new Elysia({ name: "svc-node-stream" }).get(
    "/stream",
    ({ request, server }) => {
      const filter = parseStreamFilter(new URL(request.url).searchParams, { historyLimit: broker.config.buffer_size });
      return upgradeToStream(server, request, broker, filter);
    },
    { detail: { summary: "Live HEP events of this node (WebSocket, no authentication: firewall the node port)", description: STREAM_ROUTE_DESCRIPTION } },
  );
}
