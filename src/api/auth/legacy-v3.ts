import { Elysia, t } from "elysia";
import type { AuthService } from "../../auth/index.ts";
import { clientIp, loginResponse, setSessionCookie } from "./routes.ts";

/**
 * The legacy v3 login (docs/AUTH.md "Legacy v3 login"): HOMER 7 and 10's UI and scripts send
 * `POST /api/v3/auth` with `{username, password}` and read `token`, `scope` and `user` from the
 * answer. Same service as `POST /api/v4/auth/sessions` (so `fallback_auth_type`, throttling and
 * the password rules hold alike), same body as its answer, and a token the v4 API accepts. Not in
 * the v4 OpenAPI document, which covers /api/v4 only.
 */
export function legacyV3AuthRoutes(service: AuthService) {
  return new Elysia({ name: "svc-auth-v3" }).post(
    "/auth",
    async ({ body, request, server, set }) => {
      const session = await service.login(body, clientIp(server, request));
      set.status = 201;
      setSessionCookie(set, request, session);
      return loginResponse(session);
    },
    {
      body: t.Object(
        {
          username: t.String({ minLength: 1, maxLength: 256 }),
          password: t.String({ minLength: 1, maxLength: 1024 }),
          // HOMER's UI sends only these two; a v4-style type is taken when a client adds it.
          type: t.Optional(t.Union([t.Literal("internal"), t.Literal("ldap")])),
        },
        { additionalProperties: true },
      ),
      detail: { hide: true },
    },
  );
}
