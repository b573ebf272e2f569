import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { AGENT_SORTS, type Agent, type SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { errors, iso, listBody, listResponse, pageInput, pageQuery } from "../openapi/schemas.ts";

const AgentSchema = t.Object({
  node_id: t.String({ description: "HEP capture id" }),
  node_name: t.String(),
  ip: t.String({ description: "source address of the agent's packets" }),
  first_seen: t.String(),
  last_seen: t.String(),
  packets: t.Integer({ description: "packets received since first seen" }),
});

const agentJson = (a: Agent) => ({
  node_id: a.nodeId,
  node_name: a.nodeName,
  ip: a.ip,
  first_seen: iso(a.firstSeen),
  last_seen: iso(a.lastSeen),
  packets: a.packets,
});

/** Agents tag: capture agents as ingest saw them (filled by the ingest pipeline through AgentsRepo.recordSeen). */
export function agentsRoutes(settings: SettingsStore) {
  return new Elysia({ name: "svc-agents" })
    .use(authContext)
    .get(
      "/agents",
      ({ query }) => listBody(settings.agents.list({ nodeId: query.node_id }, pageInput(query)), agentJson),
      {
        query: t.Object({ ...pageQuery(AGENT_SORTS), node_id: t.Optional(t.String({ maxLength: 64 })) }),
        response: { 200: listResponse(AgentSchema), ...errors(400, 401) },
        detail: { tags: ["Agents"], summary: "Capture agents (sort: last_seen, node_id, node_name, ip, packets)" },
      },
    )
    .delete(
      "/agents/:nodeId",
      ({ params, query, set }) => {
        if (!settings.agents.delete(params.nodeId, query.ip)) throw new AppError("NOT_FOUND", "no such agent");
        set.status = 204;
      },
      {
        admin: true,
        params: t.Object({ nodeId: t.String({ minLength: 1, maxLength: 64 }) }),
        query: t.Object({
          ip: t.String({
            minLength: 1,
            maxLength: 64,
            description: "the agent's address (an agent is node id + address)",
          }),
        }),
        response: { 204: t.Void(), ...errors(400, 401, 403, 404) },
        detail: { tags: ["Agents"], summary: "Forget an agent (admin); it reappears when it sends again" },
      },
    );
}
