import { Elysia, t } from "elysia";
import type { AuthService, CoordinatorConfig, Session } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { profileFields, profileJson } from "../users/model.ts";
import { clearedSessionCookie, isHttps, sessionCookie } from "./cookies.ts";
import { authContext, v4Base } from "./guard.ts";

/** `type` lists only the login types this server accepts (LDAP when configured), so the document is exact. */
const loginRequest = (types: ReadonlyArray<"internal" | "ldap">) =>
  t.Object({
    username: t.String({ minLength: 1, maxLength: 256, description: "login name" }),
    password: t.String({ minLength: 1, maxLength: 1024 }),
    type: t.Optional(
      t.Union(
        (types.length > 0 ? types : (["internal"] as const)).map((k) => t.Literal(k)),
        { description: "default internal" },
      ),
    ),
  });

const LoginUser = t.Object({
  id: t.Union([t.String(), t.Null()]),
  ...profileFields,
  /** HOMER's login response carries `user.admin`; kept for clients written against it. */
  admin: t.Boolean(),
  provider: t.String(),
});

export const LoginResponse = t.Object({
  token: t.String({ description: "JWT for Authorization: Bearer" }),
  jti: t.String({ description: "session id, for DELETE /auth/sessions/{sessionId}" }),
  expires_at: t.String({ description: "ISO 8601 expiry" }),
  scope: t.String({
    description: "user id (HOMER returns the user GUID as scope); the username for users without a row",
  }),
  user: LoginUser,
});

export const MethodInfo = t.Object({ enable: t.Boolean(), name: t.String(), position: t.Integer(), type: t.String() });
export const ProvidersResponse = t.Object({
  data: t.Object({
    internal: MethodInfo,
    ldap: MethodInfo,
    oauth2: t.Array(
      t.Object({
        enable: t.Boolean(),
        name: t.String(),
        position: t.Integer(),
        type: t.String(),
        provider_name: t.String(),
        provider_image: t.String(),
        url: t.String(),
        auto_redirect: t.Boolean(),
      }),
    ),
  }),
  meta: t.Object({}),
});

/** The 201 body and cookie of a new session; the OAuth token exchange answers the same way. */
export function loginResponse(session: Session) {
  const u = session.user;
  return {
    token: session.token,
    jti: session.claims.jti,
    expires_at: new Date(session.claims.exp * 1000).toISOString(),
    scope: u.id ?? u.username,
    user: {
      id: u.id ?? null,
      ...profileJson(u),
      admin: u.isAdmin,
      provider: u.provider,
    },
  };
}

export function setSessionCookie(
  set: { headers: Record<string, string | number> },
  request: Request,
  session: Session,
): void {
  set.headers["set-cookie"] = sessionCookie(
    session.token,
    session.claims.exp - Math.floor(Date.now() / 1000),
    isHttps(request),
  );
  set.headers["cache-control"] = "no-store";
}

/** Direct peer address (forwarded headers are not trusted: they would let a client dodge throttling). */
export const clientIp = (
  server: { requestIP(r: Request): { address: string } | null } | null,
  request: Request,
): string => server?.requestIP(request)?.address ?? "unknown";

/** Auth tag: login, logout (revocation) and provider discovery. */
export function authRoutes(service: AuthService, c: CoordinatorConfig) {
  const base = v4Base(c);
  return new Elysia({ name: "svc-auth-routes" })
    .post(
      "/auth/sessions",
      async ({ body, request, server, set }) => {
        let session: Session;
        try {
          session = await service.login(body, clientIp(server, request));
        } catch (e) {
          // LDAP down: the message names the hosts tried and why (configuration, no secrets), which the
          // generic 5xx text would hide from the operator (docs/AUTH.md, Errors).
          if (e instanceof AppError && e.code === "UNAVAILABLE" && Array.isArray(e.details?.hosts_tried)) {
            set.status = 503;
            return { error: e.code, message: e.message, hosts_tried: e.details.hosts_tried as string[] };
          }
          throw e;
        }
        set.status = 201;
        setSessionCookie(set, request, session);
        return loginResponse(session);
      },
      {
        body: loginRequest(service.loginTypes()),
        response: { 201: LoginResponse, ...errors(400, 401, 403, 409, 429), 503: ErrorResponse },
        detail: {
          tags: ["Auth"],
          summary: "Log in with a password (internal or LDAP); returns a JWT and sets the svc_session cookie",
          security: [],
        },
      },
    )
    .get("/auth/providers", () => ({ data: service.describeProviders(base), meta: {} }), {
      response: { 200: ProvidersResponse },
      detail: { tags: ["Auth"], summary: "Enabled login methods, for the login page", security: [] },
    })
    .use(authContext)
    .delete(
      "/auth/sessions/:sessionId",
      async ({ auth, params, request, set }) => {
        await service.revokeSession(params.sessionId, auth);
        if (auth.via === "cookie" && auth.jti === params.sessionId)
          set.headers["set-cookie"] = clearedSessionCookie(isHttps(request));
        set.status = 204;
      },
      {
        params: t.Object({ sessionId: t.String({ minLength: 1, maxLength: 128 }) }),
        response: { 204: t.Void(), ...errors(401, 404) },
        detail: { tags: ["Auth"], summary: "Log out: revoke a session (JWT jti) for the rest of its lifetime" },
      },
    );
}
