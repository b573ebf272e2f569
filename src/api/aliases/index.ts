import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { ALIAS_SORTS, MAX_CAPTURE_ID, type IpAlias, type SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import {
  IP_OR_CIDR_PATTERN,
  IP_PATTERN,
  IdResponse,
  boolQuery,
  checkedByRoute,
  dataResponse,
  errors,
  idBody,
  idString,
  iso,
  listBody,
  listResponse,
  pageInput,
  pageQuery,
  parseBoolQuery,
} from "../openapi/schemas.ts";

export const AliasSchema = t.Object({
  id: t.String(),
  ip: t.String({ description: "address or CIDR network" }),
  name: t.String(),
  group: t.String(),
  active: t.Boolean(),
  port: t.Union([t.Integer(), t.Null()], { description: "null = every port" }),
  capture_id: t.Union([t.Integer(), t.Null()], { description: "HEP capture id; null = every capture point" }),
  created_at: t.String(),
  updated_at: t.String(),
});

const aliasJson = (a: IpAlias) => ({
  id: a.id,
  ip: a.ip,
  name: a.name,
  group: a.group,
  active: a.active,
  port: a.port,
  capture_id: a.captureId,
  created_at: iso(a.createdAt),
  updated_at: iso(a.updatedAt),
});

const fields = {
  // Checked by the route and the repository, not the validator: a pattern failure would quote the
  // regular expression, the repository names what is wrong with the value instead ("127.0.0.1/33:
  // prefix length must be 0-32", docs/ADMIN.md "IP aliases"). The document still shows the pattern.
  ip: checkedByRoute(
    "IPv4/IPv6 address or CIDR (10.0.0.0/8, 2001:db8::/32); a wrong one is a 400 naming the value and why",
    {
      type: "string",
      maxLength: 64,
      pattern: IP_OR_CIDR_PATTERN,
    },
  ),
  name: t.String({ minLength: 1, maxLength: 128 }),
  group: t.String({ maxLength: 128 }),
  active: t.Boolean(),
  port: t.Union([t.Integer({ minimum: 1, maximum: 65535 }), t.Null()], {
    description: "only this port (1-65535); null or left out = every port",
    error: "must be an integer from 1 to 65535, or null for every port",
  }),
  capture_id: t.Union([t.Integer({ minimum: 1, maximum: MAX_CAPTURE_ID }), t.Null()], {
    description:
      "only packets of this HEP capture id (1-4294967295; agents without one send 0, stored as none); null or left out = every capture point",
    error: `must be an integer from 1 to ${MAX_CAPTURE_ID} (the HEP capture id; 0 means none), or null for every capture point`,
  }),
};

type AliasBody = {
  ip?: unknown;
  name?: string;
  group?: string;
  active?: boolean;
  port?: number | null;
  capture_id?: number | null;
};

/** `ip` as text (the repository checks the address itself with cidrProblem). */
function aliasIp(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v.length > 64)
    throw new AppError(
      "VALIDATION",
      "ip: an IPv4/IPv6 address or CIDR network of at most 64 characters is required (e.g. 10.0.0.0/8)",
      { details: { fields: ["ip"] } },
    );
  return v;
}

const toInput = ({ capture_id, ip, ...rest }: AliasBody) => {
  const text = aliasIp(ip);
  return {
    ...rest,
    ...(text === undefined ? {} : { ip: text }),
    ...(capture_id === undefined ? {} : { captureId: capture_id }),
  };
};

const notFound = () => new AppError("NOT_FOUND", "no such alias");

/**
 * Aliases tag: IP/CIDR, optionally one port and one capture id → name for search results and
 * ladders; the most specific active row wins (docs/ADMIN.md, "IP aliases"). Reading is open to
 * every user; changes are admin only.
 */
export function aliasesRoutes(settings: SettingsStore) {
  const params = t.Object({ aliasId: idString() });
  return new Elysia({ name: "svc-aliases" })
    .use(authContext)
    .get(
      "/aliases",
      ({ query }) =>
        listBody(
          settings.aliases.list({ group: query.group, active: parseBoolQuery(query.active) }, pageInput(query)),
          aliasJson,
        ),
      {
        query: t.Object({
          ...pageQuery(ALIAS_SORTS),
          group: t.Optional(t.String({ maxLength: 128 })),
          active: boolQuery("active flag"),
        }),
        response: { 200: listResponse(AliasSchema), ...errors(400, 401) },
        detail: { tags: ["Aliases"], summary: "List IP aliases (sort: name, ip, group, created_at)" },
      },
    )
    .get(
      "/aliases/resolve",
      ({ query }) => ({
        data: {
          ip: query.ip,
          name: settings.aliases.resolveAlias(query.ip, query.port ?? null, query.capture_id ?? null) ?? null,
        },
      }),
      {
        query: t.Object({
          ip: t.String({ maxLength: 64, pattern: IP_PATTERN, description: "an IPv4 or IPv6 address" }),
          port: t.Optional(
            t.Integer({
              minimum: 1,
              maximum: 65535,
              description: "the endpoint's port; left out, rows with a port do not match",
            }),
          ),
          capture_id: t.Optional(
            t.Integer({
              minimum: 1,
              maximum: MAX_CAPTURE_ID,
              description: "the packet's HEP capture id; left out, rows with one do not match",
            }),
          ),
        }),
        response: {
          200: t.Object({ data: t.Object({ ip: t.String(), name: t.Union([t.String(), t.Null()]) }) }),
          ...errors(400, 401),
        },
        detail: {
          tags: ["Aliases"],
          summary: "Name of an endpoint: the most specific active alias (address, then port, then capture id), or null",
        },
      },
    )
    .post(
      "/aliases",
      ({ body, set }) => {
        const a = settings.aliases.create({ ...toInput(body), ip: aliasIp(body.ip) ?? "", name: body.name });
        set.status = 201;
        return idBody(a.id, "alias created");
      },
      {
        admin: true,
        body: t.Object({
          ip: fields.ip,
          name: fields.name,
          group: t.Optional(fields.group),
          active: t.Optional(fields.active),
          port: t.Optional(fields.port),
          capture_id: t.Optional(fields.capture_id),
        }),
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
      {
        params,
        response: { 200: dataResponse(AliasSchema), ...errors(401, 404) },
        detail: { tags: ["Aliases"], summary: "Read an alias" },
      },
    )
    .put(
      "/aliases/:aliasId",
      ({ params, body }) => {
        if (!settings.aliases.get(params.aliasId)) throw notFound();
        settings.aliases.update(params.aliasId, toInput(body));
        return idBody(params.aliasId, "alias updated");
      },
      {
        admin: true,
        params,
        body: t.Object({
          ip: t.Optional(fields.ip),
          name: t.Optional(fields.name),
          group: t.Optional(fields.group),
          active: t.Optional(fields.active),
          port: t.Optional(fields.port),
          capture_id: t.Optional(fields.capture_id),
        }),
        response: { 200: IdResponse, ...errors(400, 401, 403, 404) },
        detail: { tags: ["Aliases"], summary: "Change an alias (admin); members left out keep their value" },
      },
    )
    .delete(
      "/aliases/:aliasId",
      ({ params, set }) => {
        if (!settings.aliases.delete(params.aliasId)) throw notFound();
        set.status = 204;
      },
      {
        admin: true,
        params,
        response: { 204: t.Void(), ...errors(401, 403, 404) },
        detail: { tags: ["Aliases"], summary: "Delete an alias (admin)" },
      },
    );
}
