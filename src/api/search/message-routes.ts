import { Elysia, t } from "elysia";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { decodeSipMessage } from "../../sip/index.ts";
import { authContext } from "../auth/guard.ts";
import { errors } from "../openapi/schemas.ts";
import type { OverNodes } from "./fan-out.ts";
import { findMessage } from "./message-by-uuid.ts";
import { DecodedMessageResponse, MessageResponse } from "./model.ts";
import type { SearchService } from "./service.ts";

/** `GET /messages/{id}` and its decoded form: one message by uuid, over coordinator.nodes too (message-by-uuid.ts). */
export function messageRoutes(deps: {
  lake: Lake | undefined;
  search: SearchService;
  settings: SettingsStore;
  over: OverNodes | undefined;
}) {
  const message = (id: string) => findMessage(deps, id);
  return new Elysia({ name: "svc-messages" })
    .use(authContext)
    .get(
      "/messages/:messageId",
      async ({ params }) => {
        const m = await message(params.messageId);
        const data: Record<string, unknown> = m.item;
        return m.gathered ? { data, meta: { nodes: m.gathered.nodes, partial: m.gathered.partial } } : { data };
      },
      {
        params: t.Object({ messageId: t.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: MessageResponse, ...errors(401, 404) },
        detail: { tags: ["Transactions"], summary: "One message by uuid" },
      },
    )
    .get(
      "/messages/:messageId/decoded",
      async ({ params }) => {
        const found = await message(params.messageId);
        const m = found.item;
        const payload = String(m.payload ?? "");
        let decoded: unknown;
        if (m.proto_type === 1) decoded = decodeSipMessage(new TextEncoder().encode(payload));
        else {
          try {
            decoded = JSON.parse(payload);
          } catch {
            decoded = { text: payload };
          }
        }
        const data = {
          uuid: m.uuid == null ? null : String(m.uuid),
          proto_type: m.proto_type == null ? null : Number(m.proto_type),
          decoded,
        };
        return {
          data,
          ...(found.gathered ? { meta: { nodes: found.gathered.nodes, partial: found.gathered.partial } } : {}),
        };
      },
      {
        params: t.Object({ messageId: t.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: DecodedMessageResponse, ...errors(401, 404) },
        detail: {
          tags: ["Transactions"],
          summary: "One message decoded (SIP first line, headers, SDP; JSON reports parsed)",
        },
      },
    );
}
