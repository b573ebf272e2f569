/**
 * Test peers of the OAuth 2.0 login (docs/AUTH.md "Tests"): npm `oidc-provider` (a certified OpenID provider)
 * in-process on loopback port 0 with its development login and consent pages, a confidential
 * client and a public client that must use PKCE, a groups claim, a photo on the provider's origin
 * that needs its token, and a public picture site (a tiny Bun.serve). Also a "registered redirect URI" server: the provider sends the browser to it and it
 * forwards (302) to the appliance started afterwards on port 0, so the registered URI is known
 * before the appliance's port is (as behind a load balancer).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "bun:test";
import Provider from "oidc-provider";
import type { CallResult, Core } from "./auth-harness.ts";

/** A 2×2 PNG (red, green / blue, white). */
export const PHOTO_PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAE0lEQVR4nGP4z8DAsACIGf4DAQAclwWcT4AauwAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);

export const CONFIDENTIAL = { id: "svc-web", secret: "svc-web-secret-0123456789abcdef" };
export const PUBLIC_CLIENT = { id: "svc-spa" };

export interface Idp extends AsyncDisposable {
  issuer: string;
  /** The registered redirect URI (ends in /api/v4/auth/oauth2/<name>/callback). */
  redirectUri: string;
  photoUrl: string;
  /** A public image for `provider_image`. */
  logoUrl: string;
  /** The Authorization header of each fetch of the provider's photo (on the issuer's origin). */
  photoRequests: string[];
  /** The Authorization header of each request to the other site (button image, erin's picture). */
  cdnRequests: string[];
  /** Where the redirect server forwards to: set once the appliance listens. */
  forwardTo(base: string): void;
  /** Stops the provider (the appliance then sees it down); the redirect server stays. */
  stopProvider(): Promise<void>;
  /** `coordinator.oauth2_provider` for one of the two clients. */
  providerConfig(client: "confidential" | "public", extra?: Record<string, unknown>): Record<string, unknown>;
}

type Claims = Record<string, unknown>;

export async function startIdp(
  name = "corp",
  accounts: (photoUrl: string, publicPictureUrl: string) => Record<string, Claims> = defaultAccounts,
): Promise<Idp> {
  // Authorization headers seen, per path: the provider's photo and the public picture site.
  const photoRequests: string[] = [];
  const cdnRequests: string[] = [];
  const cdn = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      // Another site: the button image and a public picture; neither may be sent the provider's token.
      cdnRequests.push(req.headers.get("authorization") ?? "");
      return new Response(PHOTO_PNG, { headers: { "content-type": "image/png" } });
    },
  });
  const logoUrl = `http://127.0.0.1:${cdn.port}/logo.png`;
  const publicPictureUrl = `http://127.0.0.1:${cdn.port}/pictures/erin.png`;
  let forward = "";
  const redirectServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      if (forward === "") return new Response("appliance not started", { status: 503 });
      return Response.redirect(`${forward}${u.pathname}${u.search}`, 302);
    },
  });
  const redirectUri = `http://127.0.0.1:${redirectServer.port}/api/v4/auth/oauth2/${name}/callback`;

  let handler:
    | ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void)
    | undefined;
  const server: Server = createServer((req, res) => {
    // The provider's own photo endpoint (as Microsoft Graph's): it needs the access token.
    if (req.url?.startsWith("/photos/")) {
      const authz = req.headers.authorization ?? "";
      photoRequests.push(authz);
      if (!authz.startsWith("Bearer ")) res.writeHead(401).end("token required");
      else res.writeHead(200, { "content-type": "image/png" }).end(PHOTO_PNG);
      return;
    }
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const photoUrl = `${issuer}/photos/alice.png`;
  const table = accounts(photoUrl, publicPictureUrl);
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CONFIDENTIAL.id,
        client_secret: CONFIDENTIAL.secret,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
      {
        client_id: PUBLIC_CLIENT.id,
        token_endpoint_auth_method: "none",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["preferred_username", "name", "given_name", "family_name", "picture"],
      groups: ["groups"],
    },
    scopes: ["openid", "email", "profile", "groups"],
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...(table[sub] ?? {}) }) }),
    cookies: { keys: ["oauth-test-cookie-key-0123456789"] },
    features: { devInteractions: { enabled: true } },
  });
  handler = provider.callback();
  let providerStopped = false;
  const stopProvider = async () => {
    if (providerStopped) return;
    providerStopped = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    issuer,
    redirectUri,
    photoUrl,
    logoUrl,
    photoRequests,
    cdnRequests,
    forwardTo(base) {
      forward = base.replace(/\/+$/, "");
    },
    stopProvider,
    providerConfig(client, extra = {}) {
      return {
        enable: true,
        name,
        provider_name: "Corp SSO",
        client_id: client === "confidential" ? CONFIDENTIAL.id : PUBLIC_CLIENT.id,
        client_secret: client === "confidential" ? CONFIDENTIAL.secret : "",
        use_pkce: client === "public",
        auth_url: `${issuer}/auth`,
        token_url: `${issuer}/token`,
        profile_url: `${issuer}/me`,
        redirect_url: redirectUri,
        scopes: ["openid", "email", "profile", "groups"],
        admin_groups: ["voip-admins"],
        ...extra,
      };
    },
    async [Symbol.asyncDispose]() {
      await stopProvider();
      await cdn.stop(true);
      await redirectServer.stop(true);
    },
  };
}

/**
 * alice: preferred_username, admin by an object group, a photo at the provider; bob: email only,
 * plain groups; mallory: bob's address, unverified; erin: a picture on another site; others: sub only.
 */
function defaultAccounts(photoUrl: string, publicPictureUrl: string): Record<string, Claims> {
  return {
    alice: {
      preferred_username: "alice",
      email: "alice@corp.example",
      email_verified: true,
      name: "Alice Example",
      picture: photoUrl,
      groups: ["ops", { name: "voip-admins" }],
    },
    bob: {
      email: "bob@corp.example",
      email_verified: true,
      given_name: "Bob",
      family_name: "Builder",
      groups: [{ group_name: "ops" }],
    },
    mallory: { email: "bob@corp.example", email_verified: false },
    erin: { preferred_username: "erin", picture: publicPictureUrl },
  };
}

/**
 * The browser's part, over HTTP: follows redirects with a cookie jar and submits the provider's
 * development login (every password is accepted) and consent forms, until a redirect leaves the provider.
 * Returns that redirect's URL (the registered redirect URI with code and state).
 */
export async function loginAtProvider(
  authorizeUrl: string,
  login: string,
  opts: { abort?: boolean } = {},
): Promise<URL> {
  const jar = new Map<string, string>();
  const origin = new URL(authorizeUrl).origin;
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const r = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return r;
  };
  let r = await send(authorizeUrl);
  for (let hops = 0; hops < 20; hops++) {
    if (r.status >= 300 && r.status < 400) {
      const next = new URL(r.headers.get("location")!, r.url || origin);
      if (next.origin !== origin) return next;
      r = await send(next.href);
      continue;
    }
    const page = await r.text();
    if (r.status !== 200) throw new Error(`provider answered ${r.status}: ${page.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`no form in the provider's page: ${page.slice(0, 300)}`);
    if (opts.abort) {
      const abort = /href="([^"]*\/abort)"/.exec(page)?.[1];
      if (!abort) throw new Error("no abort link in the provider's page");
      r = await send(new URL(abort, origin).href);
      continue;
    }
    const form: Record<string, string> = prompt === "login" ? { prompt, login, password: "whatever" } : { prompt };
    r = await send(new URL(action, origin).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
  }
  throw new Error("too many redirects at the provider");
}

// The appliance's side of the flow, as the browser that starts it (provider `corp`).

export const location = (r: CallResult) => r.headers.get("location") ?? "";

/**
 * The binding cookie ("name=value") each started sign-in set in the browser that started it, by
 * state: `callback` sends it back, as that browser would (docs/AUTH.md "Browser binding").
 */
export const bindingCookies = new Map<string, string>();

/** GET redirect → authorize URL (asserts the 302 and keeps the binding cookie it sets). */
export async function begin(c: Core, redirectUri?: string): Promise<URL> {
  const q = redirectUri === undefined ? "" : `?redirect_uri=${encodeURIComponent(redirectUri)}`;
  const r = await c.call("GET", `/auth/oauth2/corp/redirect${q}`);
  expect({ status: r.status, text: r.text }).toEqual({ status: 302, text: "" });
  const authorize = new URL(location(r));
  bindingCookies.set(
    authorize.searchParams.get("state") ?? "",
    (r.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
  );
  return authorize;
}

/**
 * The provider's redirect to the registered URI, called on `c` (path and query kept) by the browser
 * that started the sign-in, or by another one: `cookie` null sends no cookie, a string that cookie.
 */
export async function callback(
  c: Core,
  back: URL,
  edit: (q: URLSearchParams) => void = () => {},
  cookie?: string | null,
): Promise<CallResult> {
  expect(back.pathname).toBe("/api/v4/auth/oauth2/corp/callback");
  const q = new URLSearchParams(back.search);
  const own = bindingCookies.get(q.get("state") ?? "");
  edit(q);
  const sent = cookie === undefined ? own : (cookie ?? undefined);
  return await c.call("GET", `/auth/oauth2/corp/callback?${q}`, sent ? { headers: { cookie: sent } } : {});
}

export const oauthErrorOf = (target: string) => new URL(target, "http://x").searchParams.get("oauth_error") ?? "";
/** The forward target of a 400 failure page (its meta refresh). */
export const refreshOf = (r: CallResult) =>
  (/content="0;url=([^"]+)"/.exec(r.text)?.[1] ?? "").replaceAll("&amp;", "&");
