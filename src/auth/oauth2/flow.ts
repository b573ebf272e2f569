import { createHash, timingSafeEqual } from "node:crypto";
import {
  ArcticFetchError,
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
  UnexpectedErrorResponseBodyError,
  UnexpectedResponseError,
} from "arctic";
import { alphabet, generateRandomString } from "oslo/crypto";
import { AppError, errorMessage, type Counter, type Logger } from "../../core/index.ts";
import type { User, UsersRepo } from "../../settings/index.ts";
import type { AvatarCache } from "../avatars.ts";
import { hashPassword, randomPassword } from "../passwords.ts";
import { oauth2Usable, type AuthUser, type CoordinatorConfig } from "../providers.ts";
import type { AuthSharedStore } from "../state-store.ts";
import { fetchPhoto } from "./photo.ts";
import { emailOf, groupsOf, inAdminGroup, namesOf, pictureOf, usernameOf, type Profile } from "./profile.ts";
import { resolveReturnTarget, withQuery } from "./return-target.ts";

/** Lifetimes of docs/AUTH.md "OAuth 2.0": the login at the provider may take a while, the token hop is immediate. */
export const STATE_TTL_MS = 10 * 60_000;
export const ONE_TIME_TOKEN_TTL_MS = 60_000;
const PROVIDER_TIMEOUT_MS = 15_000;

interface PendingLogin {
  codeVerifier: string | null;
  target: string;
  /** SHA-256 of the browser binding: the secret itself is only in that browser's cookie. */
  bindingHash: Buffer;
}

/**
 * A started sign-in: the provider's authorize URL, and what the route puts into the browser's
 * binding cookie (docs/AUTH.md "Browser binding"): the random `binding` under a name
 * derived from `state`, limited to `callbackPath`, for `maxAgeSec`.
 */
export interface BeginResult {
  url: URL;
  state: string;
  binding: string;
  callbackPath: string;
  maxAgeSec: number;
}

const sha256 = (s: string): Buffer => createHash("sha256").update(s).digest();

/**
 * Where the callback sends the browser. `status` 302 is an ordinary redirect (success, or a failure
 * at the provider's side); 400 means the request itself was bad (unknown or reused state, a rejected
 * code): the answer is a 400 whose page forwards the browser to `location` all the same, so the
 * login page can say what went wrong.
 */
export interface CallbackOutcome {
  status: 302 | 400;
  location: string;
  /** The `oauth_error` text, when the login failed. */
  error?: string;
}

export interface CallbackQuery {
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
  error_description?: string | undefined;
  redirect_uri?: string | undefined;
}

/**
 * The OAuth 2.0 authorization-code flow of `coordinator.oauth2_provider` (docs/AUTH.md "OAuth 2.0")
 * with arctic's generic client: redirect (CSRF state, PKCE S256 when `use_pkce`), callback (state
 * taken once, code exchanged, profile read, user mapped, photo cached), one-time token, exchange.
 */
export class OAuth2Login {
  constructor(
    private readonly config: CoordinatorConfig,
    private readonly users: UsersRepo,
    private readonly avatars: AvatarCache,
    /** State and one-time tokens, taken once; shared by the replicas when configured (docs/AUTH.md "Several coordinators"). */
    private readonly shared: AuthSharedStore,
    private readonly logger: Logger,
    private readonly outcomes: Counter<"result">,
  ) {}

  private get p() {
    return this.config.oauth2_provider;
  }

  private checkProvider(name: string): void {
    if (!oauth2Usable(this.config) || name !== this.p.name) {
      throw new AppError(
        "VALIDATION",
        `OAuth 2.0 provider "${name}" is not configured or not enabled on this server (coordinator.oauth2_provider)`,
      );
    }
  }

  private client(): OAuth2Client {
    return new OAuth2Client(
      this.p.client_id,
      this.p.client_secret === "" ? null : this.p.client_secret,
      this.p.redirect_url,
    );
  }

  /**
   * `GET /auth/oauth2/{name}/redirect`: the provider's authorize URL and the browser binding; 400 for
   * an unsafe `redirect_uri`, here before the login at the provider, never after it.
   */
  async begin(name: string, redirectUri: string | undefined): Promise<BeginResult> {
    this.checkProvider(name);
    const target = resolveReturnTarget(this.p.callback_url, redirectUri);
    if (!target.ok)
      throw new AppError("VALIDATION", target.detail ?? "redirect_uri refused", {
        details: { fields: ["redirect_uri"] },
      });
    const state = generateState();
    // A second random value (not the state, which travels in URLs the provider and its logs see).
    const binding = generateState();
    const codeVerifier = this.p.use_pkce ? generateCodeVerifier() : null;
    await this.shared.putOnce(
      "oauth_state",
      state,
      encodePending({ codeVerifier, target: target.value, bindingHash: sha256(binding) }),
      STATE_TTL_MS,
    );
    const scopes = [...this.p.scopes];
    const url =
      codeVerifier === null
        ? this.client().createAuthorizationURL(this.p.auth_url, state, scopes)
        : this.client().createAuthorizationURLWithPKCE(
            this.p.auth_url,
            state,
            CodeChallengeMethod.S256,
            codeVerifier,
            scopes,
          );
    return { url, state, binding, callbackPath: this.callbackPath(), maxAgeSec: STATE_TTL_MS / 1000 };
  }

  /** The path of `redirect_url`: the browser comes back there, so the binding cookie needs no wider path. */
  callbackPath(): string {
    try {
      return new URL(this.p.redirect_url).pathname.replaceAll(";", "%3B");
    } catch {
      return "/";
    }
  }

  /**
   * `GET /auth/oauth2/{name}/callback`. `binding` is the value of the browser's binding cookie for
   * this state (undefined without one). Never throws for the provider's or the browser's faults.
   */
  async callback(name: string, q: CallbackQuery, binding: string | undefined): Promise<CallbackOutcome> {
    this.checkProvider(name);
    const fallback = resolveReturnTarget(this.p.callback_url, undefined);
    const home = fallback.ok ? fallback.value : "/";
    const failed = (status: 302 | 400, result: string, error: string, to = home): CallbackOutcome => {
      this.outcomes.inc({ result });
      this.logger.info("OAuth 2.0 login failed", { provider: name, result, error });
      return { status, location: withQuery(to, "oauth_error", error), error };
    };
    let override: string | undefined;
    if (q.redirect_uri !== undefined && q.redirect_uri !== "") {
      const r = resolveReturnTarget(this.p.callback_url, q.redirect_uri);
      if (!r.ok) return failed(400, "bad_redirect", r.detail ?? "redirect_uri refused");
      override = r.value;
    }
    const pending = q.state ? decodePending(await this.shared.takeOnce("oauth_state", q.state)) : undefined;
    if (!pending)
      return failed(
        400,
        "bad_state",
        "the sign-in request is unknown, expired or was already used (state mismatch): start the sign-in again",
      );
    // Login CSRF: a callback URL opened in a browser other than the one that started the sign-in
    // lacks its cookie. The state is spent all the same, and the code is never exchanged.
    if (binding === undefined || !timingSafeEqual(sha256(binding), pending.bindingHash)) {
      return failed(
        400,
        "bad_binding",
        `this browser did not start this sign-in (its sign-in cookie is ${binding === undefined ? "missing" : "wrong"}): start the sign-in again in this browser, at ${origin(this.p.redirect_url)}`,
      );
    }
    const target = override ?? pending.target;
    if (q.error) {
      const why = q.error_description ? `${q.error}: ${q.error_description}` : q.error;
      return failed(302, "provider_refused", `the identity provider refused the sign-in (${why})`, target);
    }
    if (!q.code) return failed(400, "no_code", "the identity provider sent no authorization code", target);

    let accessToken: string;
    try {
      const tokens = await withTimeout(
        this.client().validateAuthorizationCode(this.p.token_url, q.code, pending.codeVerifier),
        "token request",
      );
      accessToken = tokens.accessToken();
    } catch (e) {
      if (e instanceof OAuth2RequestError) {
        return failed(
          400,
          "code_rejected",
          `the identity provider rejected the authorization code (${e.code}${e.description ? `: ${e.description}` : ""})`,
          target,
        );
      }
      return failed(
        302,
        "provider_unreachable",
        `the identity provider's token endpoint ${origin(this.p.token_url)} failed: ${describeFetchError(e)}`,
        target,
      );
    }

    let profile: Profile;
    try {
      profile = await this.readProfile(accessToken);
    } catch (e) {
      return failed(
        302,
        "profile_failed",
        `could not read the user profile from ${origin(this.p.profile_url)}: ${errorMessage(e)}`,
        target,
      );
    }
    const mapped = await this.mapUser(profile);
    if (typeof mapped === "string") return failed(302, "no_user", mapped, target);

    const picture = pictureOf(profile);
    if (picture) {
      const providerOrigins = [this.p.auth_url, this.p.token_url, this.p.profile_url].map(origin);
      const photo = await fetchPhoto(picture, accessToken, providerOrigins, PROVIDER_TIMEOUT_MS);
      if (photo.ok) this.avatars.set(mapped.username, photo.value);
      else this.logger.warn("OAuth 2.0 profile photo not cached", { username: mapped.username, reason: photo.reason });
    }
    const oneTime = generateRandomString(43, alphabet("a-z", "A-Z", "0-9", "-", "_"));
    await this.shared.putOnce("oauth_token", oneTime, JSON.stringify(mapped), ONE_TIME_TOKEN_TTL_MS);
    this.outcomes.inc({ result: "ok" });
    this.logger.info("OAuth 2.0 login", { provider: name, username: mapped.username, admin: mapped.isAdmin });
    return { status: 302, location: withQuery(target, "token", oneTime) };
  }

  /** `POST /auth/oauth2/token`: the user of a one-time token, once; 401 for an unknown, expired or used token. */
  async redeem(token: string): Promise<AuthUser> {
    const kept = await this.shared.takeOnce("oauth_token", token);
    const user = kept === undefined ? undefined : (JSON.parse(kept) as AuthUser);
    if (!user) {
      this.outcomes.inc({ result: "token_rejected" });
      throw new AppError(
        "UNAUTHORIZED",
        "the one-time sign-in token is invalid, expired or was already used: sign in again",
      );
    }
    return user;
  }

  private async readProfile(accessToken: string): Promise<Profile> {
    const r = await fetch(this.p.profile_url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const body: unknown = await r.json().catch(() => undefined);
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new Error("the answer is not a JSON object");
    return body as Profile;
  }

  /** docs/AUTH.md "OAuth 2.0", user mapping: match by username, then email; provision unless `skip_auto_provision`. */
  private async mapUser(profile: Profile): Promise<AuthUser | string> {
    const username = usernameOf(profile);
    if (!username) return "the identity provider's profile has no preferred_username, email or sub";
    const email = emailOf(profile);
    let row: User | undefined = this.users.getByUsername(username);
    // An address the provider marks unverified may belong to someone else: it never matches an existing row.
    if (!row && email !== "" && profile.email_verified !== false)
      row = this.users.list({ email }, { limit: 1 }).items[0];
    if (!row && this.p.skip_auto_provision) {
      return `no matching user for "${username}"${email ? ` or ${email}` : ""} on this server; ask an administrator to create the account`;
    }
    if (!row) {
      const passwordHash = await hashPassword(randomPassword());
      try {
        row = this.users.create({ username, passwordHash, email, ...namesOf(profile) });
        this.logger.info("OAuth 2.0 user provisioned", { username });
      } catch (e) {
        // A second sign-in of the same new user, finished during the hash above, created the row first.
        row = this.users.getByUsername(username);
        if (!row) throw e;
      }
    }
    if (!row.isActive) return `the account "${row.username}" is disabled on this server`;
    const groups = groupsOf(profile, this.p.group_claim);
    return {
      id: row.id,
      username: row.username,
      email: row.email,
      firstName: row.firstName,
      lastName: row.lastName,
      userGroup: row.userGroup,
      isAdmin: row.isAdmin || inAdminGroup(groups, this.p.admin_groups),
      provider: "oauth2",
    };
  }
}

/** A started sign-in as the store keeps it (text, so that a database can hold it). */
function encodePending(p: PendingLogin): string {
  return JSON.stringify({ codeVerifier: p.codeVerifier, target: p.target, bindingHash: p.bindingHash.toString("hex") });
}

function decodePending(text: string | undefined): PendingLogin | undefined {
  if (text === undefined) return undefined;
  const v = JSON.parse(text) as { codeVerifier: string | null; target: string; bindingHash: string };
  return { codeVerifier: v.codeVerifier, target: v.target, bindingHash: Buffer.from(v.bindingHash, "hex") };
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function describeFetchError(e: unknown): string {
  if (e instanceof UnexpectedResponseError || e instanceof UnexpectedErrorResponseBodyError) return `HTTP ${e.status}`;
  if (e instanceof ArcticFetchError) return `cannot connect (${errorMessage(e.cause)})`;
  return errorMessage(e);
}

async function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} timed out after ${PROVIDER_TIMEOUT_MS / 1000} s`)),
      PROVIDER_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
