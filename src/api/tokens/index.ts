import { Elysia, t } from "elysia";
import type { AuthService, CoordinatorConfig } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import { TOKEN_SORTS, type ApiToken, type SettingsStore } from "../../settings/index.ts";
import { authContext, type AuthContext } from "../auth/guard.ts";
import {
  Pagination,
  dataResponse,
  errors,
  idString,
  iso,
  isoOrNull,
  listBody,
  pageInput,
  pageQuery,
  boolQuery,
  parseBoolQuery,
} from "../openapi/schemas.ts";
import { tokenAccess } from "./access.ts";

/** A token as listed: never the secret nor its hash. */
const TokenSchema = t.Object({
  id: t.String(),
  name: t.String(),
  token_prefix: t.String({ description: "first characters of the secret, to tell tokens apart" }),
  username: t.String({ description: "owner; the token acts as this user" }),
  active: t.Boolean(),
  expires_at: t.Union([t.String(), t.Null()]),
  limit_calls: t.Integer({ description: "0 = unlimited" }),
  calls: t.Integer(),
  last_used_at: t.Union([t.String(), t.Null()]),
  created_at: t.String(),
  updated_at: t.String(),
});

const tokenJson = (k: ApiToken) => ({
  id: k.id,
  name: k.name,
  token_prefix: k.tokenPrefix,
  username: k.username,
  active: k.active,
  expires_at: isoOrNull(k.expiresAt),
  limit_calls: k.limitCalls,
  calls: k.calls,
  last_used_at: isoOrNull(k.lastUsedAt),
  created_at: iso(k.createdAt),
  updated_at: iso(k.updatedAt),
});

/** `meta.token_access` of the list: the page says plainly when tokens are refused and how to enable them. */
const TokenAccessSchema = t.Object({
  enabled: t.Boolean({
    description: "coordinator.api_settings.enable_token_access: false = every API token is refused (401)",
  }),
  header: t.String({ description: "the header that carries a token (coordinator.api_settings.auth_token_header)" }),
  config_key: t.String({ description: "the configuration key that enables token access" }),
  env: t.String({ description: "the same key as an environment variable" }),
  message: t.String({ description: "a sentence for the user: disabled, and how to enable it" }),
});

const expiresAt = t.Optional(
  t.Union([t.String({ format: "date-time", maxLength: 64, description: "ISO 8601 time" }), t.Null()], {
    description: "null = never",
  }),
);

function parseExpiry(v: string | null | undefined): number | null | undefined {
  if (v === undefined || v === null) return v;
  const ms = Date.parse(v);
  if (Number.isNaN(ms))
    throw new AppError("VALIDATION", "expires_at: not an ISO 8601 time", { details: { fields: ["expires_at"] } });
  return ms;
}

/** Token management needs a session: a token cannot mint or widen tokens (no self-perpetuating credential). */
function requireSession(auth: AuthContext): void {
  if (auth.via === "token") throw new AppError("FORBIDDEN", "API tokens cannot manage API tokens; log in");
}

const mine = (k: ApiToken | undefined, auth: AuthContext): ApiToken => {
  if (!k || (!auth.isAdmin && k.username.toLowerCase() !== auth.username.toLowerCase()))
    throw new AppError("NOT_FOUND", "no such token");
  return k;
};

/**
 * Tokens tag: static API tokens sent raw in `coordinator.api_settings.auth_token_header`. Users
 * manage their own; administrators see and manage all. The secret appears once, in the create
 * response.
 */
export function tokensRoutes(
  settings: SettingsStore,
  service: AuthService,
  apiSettings: CoordinatorConfig["api_settings"],
) {
  const params = t.Object({ tokenId: idString() });
  const access = tokenAccess(apiSettings);
  return new Elysia({ name: "svc-tokens" })
    .use(authContext)
    .get(
      "/tokens",
      ({ auth, query }) => {
        const body = listBody(
          settings.tokens.list(
            { username: auth.isAdmin ? query.username : auth.username, active: parseBoolQuery(query.active) },
            pageInput(query),
          ),
          tokenJson,
        );
        return { ...body, meta: { ...body.meta, token_access: access } };
      },
      {
        query: t.Object({
          ...pageQuery(TOKEN_SORTS),
          username: t.Optional(t.String({ maxLength: 64, description: "owner (administrators)" })),
          active: boolQuery("active flag"),
        }),
        response: {
          200: t.Object({
            data: t.Object({ items: t.Array(TokenSchema) }),
            meta: t.Object({ pagination: Pagination, token_access: TokenAccessSchema }),
          }),
          ...errors(400, 401),
        },
        detail: {
          tags: ["Tokens"],
          summary:
            "List API tokens (own; administrators: all). Sort: name, created_at, expires_at, calls, username. meta.token_access says whether the server accepts tokens at all",
        },
      },
    )
    .post(
      "/tokens",
      ({ auth, body, set }) => {
        requireSession(auth);
        const { token, secret } = service.createApiToken(auth, {
          name: body.name,
          active: body.active,
          expiresAt: parseExpiry(body.expires_at),
          limitCalls: body.limit_calls,
        });
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { data: { ...tokenJson(token), token: secret }, message: "store the token now: it is not shown again" };
      },
      {
        body: t.Object({
          name: t.String({ minLength: 1, maxLength: 128 }),
          active: t.Optional(t.Boolean({ default: true })),
          expires_at: expiresAt,
          limit_calls: t.Optional(t.Integer({ minimum: 0, description: "0 = unlimited" })),
        }),
        response: {
          201: t.Object({
            data: t.Composite([TokenSchema, t.Object({ token: t.String({ description: "the secret, shown once" }) })]),
            message: t.String(),
          }),
          ...errors(400, 401, 403),
        },
        detail: {
          tags: ["Tokens"],
          summary: "Create an API token for the caller; the response carries the secret once",
        },
      },
    )
    .get(
      "/tokens/:tokenId",
      ({ auth, params }) => ({ data: tokenJson(mine(settings.tokens.get(params.tokenId), auth)) }),
      {
        params,
        response: { 200: dataResponse(TokenSchema), ...errors(401, 404) },
        detail: { tags: ["Tokens"], summary: "Read an API token (without its secret)" },
      },
    )
    .patch(
      "/tokens/:tokenId",
      ({ auth, params, body }) => {
        requireSession(auth);
        const k = mine(settings.tokens.get(params.tokenId), auth);
        const updated = settings.tokens.update(k.id, {
          name: body.name,
          active: body.active,
          expiresAt: parseExpiry(body.expires_at),
          limitCalls: body.limit_calls,
        });
        return { data: tokenJson(updated ?? k) };
      },
      {
        params,
        body: t.Object({
          name: t.Optional(t.String({ minLength: 1, maxLength: 128 })),
          active: t.Optional(t.Boolean()),
          expires_at: expiresAt,
          limit_calls: t.Optional(t.Integer({ minimum: 0 })),
        }),
        response: { 200: dataResponse(TokenSchema), ...errors(400, 401, 403, 404) },
        detail: { tags: ["Tokens"], summary: "Change name, active, expires_at or limit_calls" },
      },
    )
    .delete(
      "/tokens/:tokenId",
      ({ auth, params, set }) => {
        requireSession(auth);
        settings.tokens.delete(mine(settings.tokens.get(params.tokenId), auth).id);
        set.status = 204;
      },
      {
        params,
        response: { 204: t.Void(), ...errors(401, 403, 404) },
        detail: { tags: ["Tokens"], summary: "Delete an API token" },
      },
    );
}
