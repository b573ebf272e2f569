import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { ALIAS_SORTS, type IpAlias, type SettingsStore } from "../../settings/index.ts";
import { authContext, requireAdmin } from "../auth/guard.ts";
import { IP_OR_CIDR_PATTERN, IP_PATTERN, IdResponse, boolQuery, dataResponse, errors, idBody, idString, iso, listBody, listResponse, pageInput, pageQuery, parseBoolQuery } from "../openapi/schemas.ts";

const AliasSchema = t.Object({
  id: t.String(),
  ip: t.String({ description: "address or CIDR network" }),
  name: t.String(),
  group: t.String(),
  active: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String(),
});

const aliasJson = (a: IpAlias) => ({ id: a.id, ip: a.ip, name: a.name, group: a.group, active: a.active, created_at: iso(a.createdAt), updated_at: iso(a.updatedAt) });

const fields = {
  ip: t.String({ maxLength: 64, pattern: IP_OR_CIDR_PATTERN, description: "IPv4/IPv6 address or CIDR (10.0.0.0/8, 2001:db8::/32)" }),
  name: t.String({ minLength: 1, maxLength: 128 }),
  group: t.String({ maxLength: 128 }),
  active: t.Boolean(),
};

const notFound = () => new AppError("NOT_FOUND", "no such alias");

/** Aliases tag: IP/CIDR → name for search results and ladders. Reading is open to every user; changes are admin only. */
export function aliasesRoutes(settings: SettingsStore) {
  const params = t.Object({ aliasId: idString() });
  return new Elysia({ name: "svc-aliases" })
    .use(authContext)
    .get("/aliases", ({ query }) => listBody(settings.aliases.list({ group: query.group, active: parseBoolQuery(query.active) }, pageInput(query)), aliasJson), {
      query: t.Object({ ...pageQuery(ALIAS_SORTS), group: t.Optional(t.String({ maxLength: 128 })), active: boolQuery("active flag") }),
      response: { 200: listResponse(AliasSchema), ...errors(400, 401) },
      detail: { tags: ["Aliases"], summary: "List IP aliases (sort: name, ip, group, created_at)" },
    })
    .get("/aliases/resolve", ({ query }) => ({ data: { ip: query.ip, name: settings.aliases.resolveAlias(query.ip) ?? null } }), {
      query: t.Object({ ip: t.String({ maxLength: 64, pattern: IP_PATTERN, description: "an IPv4 or IPv6 address" }) }),
      response: { 200: t.Object({ data: t.Object({ ip: t.String(), name: t.Union([t.String(), t.Null()]) }) }), ...errors(400, 401) },
      detail: { tags: ["Aliases"], summary: "Name of an address: the most specific active alias, or null" },
    })
    .post(
      "/aliases",
      ({ auth, body, set }) => {
        requireAdmin(auth);
        const a = settings.aliases.create(body);
        set.status = 201;
        return idBody(a.id, "alias created");
      },
      {
        body: t.Object({ ip: fields.ip, name: fields.name, group: t.Optional(fields.group), active: t.Optional(fields.active) }),
        response: { 201: IdResponse, ...errors(400, 401, 403) },
        detail: { tags: ["Aliases"], summary: "Create an alias (admin)" },
      },
    )
    .get(
      "/aliases/:aliasId",
      ({ params }) => {
        const a = settings.aliases.get(params.aliasId);
        if (!a) throw notFound();
        return { data: aliasJson(a) };
      },
      { params, response: { 200: dataResponse(AliasSchema), ...errors(401, 404) }, detail: { tags: ["Aliases"], summary: "Read an alias" } },
    )
    .put(
      "/aliases/:aliasId",
      ({ auth, params, body }) => {
        requireAdmin(auth);
        if (!settings.aliases.get(params.aliasId)) throw notFound();
        settings.aliases.update(params.aliasId, body);
        return idBody(params.aliasId, "alias updated");
      },
      {
        params,
        body: t.Object({ ip: t.Optional(fields.ip), name: t.Optional(fields.name), group: t.Optional(fields.group), active: t.Optional(fields.active) }),
        response: { 200: IdResponse, ...errors(400, 401, 403, 404) },
        detail: { tags: ["Aliases"], summary: "Change an alias (admin); members left out keep their value" },
      },
    )
    .delete(
      "/aliases/:aliasId",
      ({ auth, params, set }) => {
        requireAdmin(auth);
        if (!settings.aliases.delete(params.aliasId)) throw notFound();
        set.status = 204;
      },
      { params, response: { 204: t.Void(), ...errors(401, 403, 404) }, detail: { tags: ["Aliases"], summary: "Delete an alias (admin)" } },
    );
}
