import { Elysia } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import type { CoordinatorConfig } from "../../auth/index.ts";
import {
  SIP_METHODS,
  STREAM_ROUTE_DESCRIPTION,
  parseStreamFilter,
  upgradeToStream,
  type StreamSource,
} from "../../stream/index.ts";
import { authOf } from "../auth/guard.ts";
import { ErrorResponse } from "../openapi/schemas.ts";

const ERROR = ErrorResponse as OpenAPIV3.SchemaObject;
const DESCRIPTION: OpenAPIV3.SchemaObject = {
  type: "object",
  required: ["data"],
  properties: {
    data: {
      type: "object",
      required: ["protocol", "filter"],
      properties: {
        protocol: { type: "string", enum: ["websocket"] },
        filter: {
          type: "object",
          required: ["proto", "method", "callid", "only_requests", "include_payload", "history"],
          properties: {
            proto: { type: "array", items: { type: "integer" } },
            method: { type: "array", items: { type: "string" } },
            callid: { type: "array", items: { type: "string" } },
            only_requests: { type: "boolean" },
            include_payload: {
              type: "boolean",
              description: "false when the payload policy does not allow it, whatever was asked",
            },
            history: { type: "integer" },
          },
        },
      },
    },
  },
};

/** OpenAPI parameters of the filter query (documented, checked by parseStreamFilter: repeated values). */
const repeated = (
  name: string,
  description: string,
  schema: OpenAPIV3.NonArraySchemaObject,
): OpenAPIV3.ParameterObject => ({
  name,
  in: "query",
  required: false,
  description,
  style: "form",
  explode: true,
  schema: { type: "array", items: schema },
});
const PARAMETERS: OpenAPIV3.ParameterObject[] = [
  repeated("proto", "HEP protocol type (chunk 0x000b): 1 SIP, 5 RTCP, 6 RTP, 34 RTCP-XR, ...; repeat for several", {
    type: "integer",
    minimum: 0,
    maximum: 255,
  }),
  repeated("method", "SIP method (case ignored); repeat for several; non-SIP events are not filtered by it", {
    type: "string",
    enum: [...SIP_METHODS],
  }),
  repeated(
    "callid",
    "SIP Call-ID, compared exactly (case matters); repeat for several (a call and its legs, at most 32, 256 characters each, not blank); SIP that does not parse is dropped, non-SIP events are not filtered by it",
    { type: "string", minLength: 1, maxLength: 256, pattern: "\\S" },
  ),
  {
    name: "only_requests",
    in: "query",
    required: false,
    description: "1 drops SIP responses",
    schema: { type: "string", enum: ["1", "0", "true", "false"] },
  },
  {
    name: "include_payload",
    in: "query",
    required: false,
    description:
      "1 asks for the raw payload: sent only when coordinator.hep_stream.allow_payload is true and the caller is an administrator, else silently omitted",
    schema: { type: "string", enum: ["1", "0", "true", "false"] },
  },
  {
    name: "history",
    in: "query",
    required: false,
    description: "replay up to N buffered matching events on connect (capped at coordinator.hep_stream.history_limit)",
    schema: { type: "integer", minimum: 0, maximum: 999_999_999 },
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
 * `GET /api/v4/stream/hep` (docs/STREAM.md "Security"; docs/API.md "Authentication"):
 * mounted only when `coordinator.hep_stream.enable` is true (otherwise 404). The guard has already
 * authenticated the caller by header, `svc_session` cookie or `?access_token=` (WEBSOCKET_ROUTES).
 * The payload goes out only when the client asked, `allow_payload` is on and the caller is an
 * administrator; otherwise it is silently left out. `history` is capped at `history_limit`. The
 * caller holds a slot as a user: its share is max_subscribers_per_user, and an administrator is
 * never refused for lack of a slot (docs/STREAM.md "Subscriber slots").
 */
export function streamRoutes(deps: { source: StreamSource; config: CoordinatorConfig["hep_stream"] }) {
  const c = deps.config;
  return new Elysia({ name: "svc-stream" }).get(
    "/stream/hep",
    ({ request, server }) => {
      const auth = authOf(request);
      const asked = parseStreamFilter(new URL(request.url).searchParams, { historyLimit: c.history_limit });
      const filter = { ...asked, includePayload: asked.includePayload && c.allow_payload && auth.isAdmin };
      return upgradeToStream(server, request, deps.source, filter, {
        kind: "user",
        user: auth.username,
        admin: auth.isAdmin,
      });
    },
    {
      detail: {
        tags: ["Stream"],
        summary: "Live HEP events from every node (WebSocket)",
        description: STREAM_ROUTE_DESCRIPTION,
        parameters: PARAMETERS,
        responses: {
          101: { description: "switched to the WebSocket protocol; one JSON event per text frame" },
          200: {
            description:
              "a plain GET (no Upgrade header): the filter this caller would get, history capped and the payload policy applied",
            content: { "application/json": { schema: DESCRIPTION } },
          },
          400: { description: "unknown parameter or value", content: { "application/json": { schema: ERROR } } },
          401: { description: "no or invalid credentials", content: { "application/json": { schema: ERROR } } },
        },
      },
    },
  );
}
