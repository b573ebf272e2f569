import { Elysia, t } from "elysia";
import type { AuthService } from "../../auth/index.ts";
import { errors } from "../openapi/schemas.ts";
import {
  clearedOauthBindingCookie,
  isHttps,
  oauthBindingCookie,
  oauthBindingCookieName,
  cookieValue,
} from "./cookies.ts";
import { LoginResponse, loginResponse, setSessionCookie } from "./routes.ts";

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * A 400 the browser still leaves (docs/AUTH.md "OAuth 2.0", failures): the status says the request
 * was bad, the page forwards to the login page carrying `oauth_error`, where the reason is shown.
 */
function failurePage(location: string, error: string, extra: Record<string, string>): Response {
  const href = escapeHtml(location);
  const body = `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><title>Sign-in failed</title>
<body style="font:14px system-ui;margin:3em"><h1>Sign-in failed</h1><p>${escapeHtml(error)}</p><p><a href="${href}">Back to the sign-in page</a></p></body>`;
  return new Response(body, {
    status: 400,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
      "referrer-policy": "no-referrer",
      ...extra,
    },
  });
}

const providerParam = t.Object({
  provider: t.String({
    minLength: 1,
    maxLength: 128,
    description: "the configured provider name (coordinator.oauth2_provider.name)",
  }),
});
const redirectUri = t.Optional(
  t.String({
    maxLength: 2048,
    description:
      "where to land after sign-in (docs/AUTH.md, Redirect safety): a path on this site without //, \\, %2F, %5C, . or .. segments, whitespace or control characters; or an absolute URL on the callback_url's site",
  }),
);

/** Auth tag: the OAuth 2.0 authorization-code flow (docs/AUTH.md "OAuth 2.0"). */
export function oauth2Routes(service: AuthService) {
  return new Elysia({ name: "svc-auth-oauth2" })
    .get(
      "/auth/oauth2/:provider/redirect",
      async ({ params, query, request }) => {
        const begun = await service.oauth2.begin(params.provider, query.redirect_uri);
        const cookie = oauthBindingCookie(
          begun.state,
          begun.binding,
          begun.callbackPath,
          begun.maxAgeSec,
          isHttps(request),
        );
        return new Response(null, {
          status: 302,
          headers: {
            location: begun.url.href,
            "set-cookie": cookie,
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
          },
        });
      },
      {
        params: providerParam,
        query: t.Object({ redirect_uri: redirectUri }),
        response: {
          302: t.Void({
            description:
              "to the identity provider's authorize URL (state, PKCE S256 when use_pkce); sets the browser binding cookie svc_oauth2_<hash> on the callback path",
          }),
          ...errors(400),
        },
        detail: { tags: ["Auth"], summary: "Start single sign-on: redirect to the identity provider", security: [] },
      },
    )
    .get(
      "/auth/oauth2/:provider/callback",
      async ({ params, query, request }) => {
        // The binding cookie of this state (docs/AUTH.md "Browser binding"), removed whatever the outcome.
        const state = query.state ?? "";
        const binding =
          state === ""
            ? undefined
            : cookieValue(request.headers.get("cookie"), oauthBindingCookieName(state)) || undefined;
        const out = await service.oauth2.callback(params.provider, query, binding);
        const clear: Record<string, string> =
          state === ""
            ? {}
            : { "set-cookie": clearedOauthBindingCookie(state, service.oauth2.callbackPath(), isHttps(request)) };
        if (out.status === 400) return failurePage(out.location, out.error ?? "sign-in failed", clear);
        return new Response(null, {
          status: 302,
          headers: { location: out.location, "cache-control": "no-store", "referrer-policy": "no-referrer", ...clear },
        });
      },
      {
        params: providerParam,
        query: t.Object({
          code: t.Optional(t.String({ maxLength: 4096 })),
          state: t.Optional(t.String({ maxLength: 512 })),
          error: t.Optional(t.String({ maxLength: 256 })),
          error_description: t.Optional(t.String({ maxLength: 1024 })),
          redirect_uri: redirectUri,
        }),
        // Described in `detail`: the 400 is an HTML page (it forwards the browser), not the JSON error body.
        detail: {
          tags: ["Auth"],
          summary: "Single sign-on return from the identity provider",
          security: [],
          responses: {
            302: {
              description:
                "to the callback URL with ?token=<one-time token>, or ?oauth_error=<text> when the provider failed or refused",
            },
            400: {
              description:
                "unknown or reused state, no or a wrong browser binding cookie, a rejected code or an unsafe redirect_uri: an HTML page that forwards to the callback URL with ?oauth_error=<text>; an unknown provider or a malformed query: the JSON error body",
              content: {
                "text/html": { schema: { type: "string" } },
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["error", "message"],
                    properties: { error: { type: "string" }, message: { type: "string" } },
                  },
                },
              },
            },
          },
        },
      },
    )
    .post(
      "/auth/oauth2/token",
      async ({ body, request, set }) => {
        const session = await service.exchangeOAuthToken(body.token);
        set.status = 201;
        setSessionCookie(set, request, session);
        return loginResponse(session);
      },
      {
        body: t.Object({
          token: t.String({
            minLength: 1,
            maxLength: 256,
            description: "one-time token from the callback redirect (valid 60 s, once)",
          }),
        }),
        response: { 201: LoginResponse, ...errors(400, 401) },
        detail: {
          tags: ["Auth"],
          summary: "Exchange the one-time sign-on token for a JWT (sets the svc_session cookie)",
          security: [],
        },
      },
    );
}
