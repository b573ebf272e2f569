import { Elysia } from "elysia";
import type { StreamBroker } from "./broker.ts";
import { parseStreamFilter } from "./filter.ts";
import { upgradeToStream } from "./socket.ts";

/** What both stream routes say about themselves in the API description. */
export const STREAM_ROUTE_DESCRIPTION = [
  "WebSocket (GET with Upgrade: websocket). Each text frame is one JSON HEP event: ts (epoch ms), proto, src_ip, src_port, dst_ip, dst_port, node_id, sip {method, resp_code, resp_text, callid, cseq, from_user, to_user, ruri_user} for decoded SIP, payload when allowed.",
  "Query: proto (repeatable, 0-255), method (repeatable SIP method), only_requests=1, include_payload=1, history=N (buffered matching events replayed first).",
  "400 before the upgrade for an unknown parameter or value; a subscriber over ingest.hep_stream.max_subscribers is closed at once with code 1013 and the reason.",
].join(" ");

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
      upgradeToStream(server, request, broker, filter);
      return undefined;
    },
    { detail: { summary: "Live HEP events of this node (WebSocket, no authentication: firewall the node port)", description: STREAM_ROUTE_DESCRIPTION } },
  );
}
