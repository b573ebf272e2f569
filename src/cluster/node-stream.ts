import { Elysia } from "elysia";
import { STREAM_ROUTE_DESCRIPTION, parseStreamFilter, upgradeToStream, type StreamBroker } from "../stream/index.ts";

/**
 * Node `/stream` (docs/STREAM.md "Security"): the node's broker, no
 * authentication. The node port has no credential of any kind, so every client here is anonymous
 * and never gets the raw payload: `include_payload=1` is accepted and left out (the plain GET
 * says `include_payload: false`). A client is known by its remote address, which has a share of
 * the slots (ingest.hep_stream.max_subscribers_per_address, docs/STREAM.md "Subscriber slots").
 * `history` is capped at the ring size.
 */
export function nodeStreamRoutes(broker: StreamBroker) {
  return new Elysia({ name: "svc-node-stream" }).get(
    "/stream",
    ({ request, server }) => {
      const asked = parseStreamFilter(new URL(request.url).searchParams, { historyLimit: broker.config.buffer_size });
      const address = server?.requestIP(request)?.address ?? "unknown";
      return upgradeToStream(server, request, broker, { ...asked, includePayload: false }, { kind: "anonymous", address });
    },
    {
      detail: {
        summary: "Live HEP events of this node (WebSocket, no authentication and no payload: bind the node port to loopback or firewall it)",
        description: STREAM_ROUTE_DESCRIPTION,
      },
    },
  );
}
