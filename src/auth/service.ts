import { randomUUID } from "node:crypto";
import {
  AppError,
  fail,
  ok,
  type Counter,
  type Gauge,
  type Logger,
  type MetricsRegistry,
  type Result,
} from "../core/index.ts";
import type { ApiToken, SettingsStore } from "../settings/index.ts";
import { generateApiToken, hashApiToken } from "./api-tokens.ts";
import { AvatarCache } from "./avatars.ts";
import type { FirstRunAdmin } from "./bootstrap.ts";
import { JwtSigner, LEEWAY_SEC, type SessionClaims } from "./jwt.ts";
import { OAuth2Login } from "./oauth2/flow.ts";
import {
  describeProviders,
  InternalPasswordProvider,
  ldapUsable,
  type AuthUser,
  type CoordinatorConfig,
  type PasswordProvider,
  type ProvidersInfo,
} from "./providers.ts";
import { MemoryAuthStore, type AuthSharedStore } from "./state-store.ts";
import { PgAuthStore } from "./state-store-pg.ts";

/** An authenticated caller, whichever credential it used. */
export interface Identity {
  username: string;
  isAdmin: boolean;
  provider: string;
  /** Session id when authenticated by JWT. */
  jti?: string | undefined;
  /** Expiry of the JWT (epoch ms). */
  expiresAtMs?: number | undefined;
  /** Token record id when authenticated by a static API token. */
  tokenId?: string | undefined;
}

export interface Session {
  token: string;
  claims: SessionClaims;
  user: AuthUser;
}

export type CredentialFailure =
  | "malformed"
  | "unsupported_alg"
  | "bad_signature"
  | "expired"
  | "bad_claims"
  | "revoked"
  | "user_disabled"
  | "token_rejected"
  | "disabled";

export interface LoginInput {
  username: string;
  password: string;
  type?: "internal" | "ldap" | undefined;
}

const GENERIC_LOGIN_FAILURE = "invalid username or password";

/**
 * Logins, sessions (JWT), revocation and static API tokens. Built before start (the HTTP app is
 * assembled first); `start()` loads the JWT secret.
 */
export class AuthService {
  readonly avatars = new AvatarCache();
  /** The OAuth 2.0 authorization-code flow (docs/AUTH.md "OAuth 2.0"). */
  readonly oauth2: OAuth2Login;
  /** OAuth state, one-time tokens, sessions and the login throttle: this process's, or every replica's (docs/AUTH.md "Several coordinators"). */
  readonly shared: AuthSharedStore;
  private signer: JwtSigner | undefined;
  private readonly providers = new Map<string, PasswordProvider>();
  private readonly logins: Counter<"result">;
  private readonly credentialChecks: Counter<"via" | "result">;
  private readonly checksInFlight: Gauge;

  constructor(
    private readonly config: CoordinatorConfig,
    private readonly store: SettingsStore,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    const { max_failed_logins, lockout_sec } = config.auth;
    this.shared =
      config.shared_store.url === ""
        ? new MemoryAuthStore(store.revokedSessions, max_failed_logins, lockout_sec)
        : new PgAuthStore(config.shared_store.url, max_failed_logins, lockout_sec);
    this.registerProvider(new InternalPasswordProvider(store.users, logger));
    this.oauth2 = new OAuth2Login(
      config,
      store.users,
      this.avatars,
      this.shared,
      logger,
      metrics.counter("svc_auth_oauth2_total", "OAuth 2.0 callbacks and token exchanges by result.", ["result"]),
    );
    this.logins = metrics.counter("svc_auth_logins_total", "Password login attempts by result.", ["result"]);
    this.checksInFlight = metrics.gauge(
      "svc_auth_password_checks_in_flight",
      "Password logins admitted by the throttle whose check has not ended yet.",
    );
    this.credentialChecks = metrics.counter(
      "svc_auth_credential_checks_total",
      "Credential checks on protected routes by credential kind and result.",
      ["via", "result"],
    );
  }

  private firstRunAdmin: FirstRunAdmin | undefined;

  /** The bootstrap generated the administrator's password (auth module start). */
  recordFirstRunAdmin(admin: FirstRunAdmin): void {
    this.firstRunAdmin = admin;
  }

  /** The generated administrator password, once: `svc serve` prints it in the first-run banner. */
  takeFirstRunAdmin(): FirstRunAdmin | undefined {
    const admin = this.firstRunAdmin;
    this.firstRunAdmin = undefined;
    return admin;
  }

  /** Called by the auth module at start with the secret from `loadJwtSecret`. */
  useSecret(secret: string): void {
    this.signer = new JwtSigner(secret);
  }

  private get jwt(): JwtSigner {
    if (!this.signer) throw new AppError("UNAVAILABLE", "authentication is not started");
    return this.signer;
  }

  /** LDAP (and later others) plug in here. */
  registerProvider(p: PasswordProvider): void {
    this.providers.set(p.type, p);
  }

  describeProviders(apiBase: string): ProvidersInfo {
    return describeProviders(this.config, apiBase);
  }

  private providerFor(type: "internal" | "ldap"): PasswordProvider | undefined {
    if (type === "ldap" && !ldapUsable(this.config)) return undefined;
    return this.providers.get(type);
  }

  /** The `type`s a login may ask for on this server (its provider or the fallback is usable). */
  loginTypes(): Array<"internal" | "ldap"> {
    const fallback = this.config.auth.fallback_auth_type;
    return (["internal", "ldap"] as const).filter(
      (t) => this.providerFor(t) !== undefined || (fallback !== "none" && this.providerFor(fallback) !== undefined),
    );
  }

  /**
   * `POST /auth/sessions`: 403 when password login is disabled, 429 while throttled, 401 with one
   * generic message for every wrong login (unknown user, wrong password, disabled account).
   */
  async login(input: LoginInput, clientIp: string): Promise<Session> {
    if (this.config.auth.disable_password_login) {
      this.logins.inc({ result: "disabled" });
      throw new AppError("FORBIDDEN", "password login is disabled on this server");
    }
    const requested = input.type ?? "internal";
    const fallback = this.config.auth.fallback_auth_type;
    const order = fallback !== "none" && fallback !== requested ? [requested, fallback] : [requested];
    const usable = order.map((t) => this.providerFor(t)).filter((p): p is PasswordProvider => p !== undefined);
    if (usable.length === 0) {
      throw new AppError("VALIDATION", `type: ${requested} login is not enabled on this server`, {
        details: { fields: ["type"] },
      });
    }
    // Counted before the slow password check: in this process synchronously (no await above), in the
    // shared store under a row lock, so concurrent guesses cannot all pass the gate before the
    // first of them has failed (src/auth/throttle.ts, src/auth/state-store-pg.ts).
    const gate = await this.shared.reserveLogin(input.username, clientIp);
    if (!gate.allowed) {
      this.logins.inc({ result: "throttled" });
      throw new AppError("RATE_LIMITED", "too many failed logins; try again later", {
        details: { retry_after_sec: gate.retryAfterSec },
      });
    }
    const attempt = gate.attempt;
    this.checksInFlight.inc();
    // A backend that cannot be reached (LDAP down: AppError UNAVAILABLE) hands over to the fallback;
    // when nothing accepts the login, its 503 is the answer, not a 401 (docs/AUTH.md).
    let unreachable: AppError | undefined;
    /** The directory accepted the password but the name is a local user's (refused by local_name_conflict). */
    let nameTaken = false;
    try {
      for (const provider of usable) {
        let r: Awaited<ReturnType<PasswordProvider["authenticate"]>>;
        try {
          r = await provider.authenticate(input.username, input.password);
        } catch (e) {
          if (!(e instanceof AppError && e.code === "UNAVAILABLE")) throw e;
          this.logins.inc({ result: "unavailable" });
          unreachable ??= e;
          continue;
        }
        const local =
          r.ok && r.value.provider === "ldap" ? this.store.users.getByUsername(r.value.username) : undefined;
        if (r.ok && local) {
          // API tokens, settings and dashboards are kept by name, and a token's admin flag is read
          // from that row: the directory user either is that local user (link) or is refused, never
          // both at once (docs/AUTH.md "LDAP and local users with one name").
          if (this.config.ldap.local_name_conflict === "link" && local.isActive) {
            await attempt.succeeded();
            this.logins.inc({ result: "ok" });
            this.logger.info("LDAP login linked to the local user of the same name", { username: local.username });
            const { id, username, email, firstName, lastName, userGroup, isAdmin } = local;
            return await this.issueSession({
              id,
              username,
              email,
              firstName,
              lastName,
              userGroup,
              isAdmin,
              provider: "ldap",
            });
          }
          this.logger.warn("LDAP login refused: the name belongs to a users row", {
            username: r.value.username,
            local_name_conflict: this.config.ldap.local_name_conflict,
          });
          this.logins.inc({ result: "name_taken" });
          nameTaken = true;
          continue;
        }
        if (r.ok) {
          await attempt.succeeded();
          this.logins.inc({ result: "ok" });
          return await this.issueSession(r.value);
        }
        this.logins.inc({ result: r.reason });
      }
      // The directory checked the password: the user is told why and what to do (no guess to count).
      if (nameTaken) {
        throw new AppError(
          "CONFLICT",
          `the directory account "${input.username}" has the same name as a local user of this server: log in with that local user's password (login type internal), or ask an administrator to rename the local user or to set coordinator.ldap.local_name_conflict to link`,
        );
      }
      // A wrong password from the fallback still counts, or guesses against internal users would
      // go unthrottled while LDAP is down; LDAP down alone checked nothing and counts nothing.
      if (unreachable === undefined || usable.length > 1) await attempt.failed();
      if (unreachable) throw unreachable;
    } finally {
      this.checksInFlight.inc({}, -1);
      await attempt.abandoned(); // only when neither verdict was given (an error was thrown)
    }
    this.logger.info("login failed", { username: input.username, ip: clientIp, type: requested });
    throw new AppError("UNAUTHORIZED", GENERIC_LOGIN_FAILURE);
  }

  /** `POST /auth/oauth2/token`: the one-time token of the callback redirect, once, for a session. */
  async exchangeOAuthToken(token: string): Promise<Session> {
    return await this.issueSession(await this.oauth2.redeem(token));
  }

  /** Signs a session JWT for an authenticated user (password login, OAuth token exchange). */
  async issueSession(user: AuthUser): Promise<Session> {
    // Right after a password change, wait for the second from which the user's sessions count
    // again (users-repo update; at most one second), so the new token is not refused as older.
    const validAfterSec =
      user.provider === "internal" ? (this.store.users.getByUsername(user.username)?.sessionsValidAfterSec ?? 0) : 0;
    const waitMs = validAfterSec * 1000 - Date.now();
    if (waitMs > 0) await Bun.sleep(Math.min(waitMs, 1000));
    const iat = Math.floor(Date.now() / 1000);
    const claims: SessionClaims = {
      sub: user.username,
      username: user.username,
      admin: user.isAdmin,
      jti: randomUUID(),
      iat,
      exp: iat + Math.max(1, Math.round(this.config.jwt.lifetime_hours * 3600)),
      provider: user.provider,
    };
    const token = await this.jwt.sign(claims);
    await this.shared.recordIssued(claims.jti, user.username, claims.exp * 1000);
    return { token, claims, user };
  }

  /**
   * Validates a session JWT. Internal users must still exist and be active, and their admin flag
   * is read from `users` (a demotion applies at once); LDAP/OAuth sessions keep the flag they were
   * issued with, since those users may have no row (an OAuth admin may be one by group only). An
   * OAuth user whose row was disabled is refused.
   */
  async verifySession(token: string): Promise<Result<Identity, CredentialFailure>> {
    const r = await this.jwt.verify(token);
    if (!r.ok) return this.counted("jwt", r);
    const c = r.value;
    if (await this.shared.isRevoked(c.jti)) return this.counted("jwt", fail("revoked"));
    let isAdmin = c.admin;
    if (c.provider === "internal") {
      const u = this.store.users.getByUsername(c.username);
      if (!u?.isActive) return this.counted("jwt", fail("user_disabled"));
      // A password change (users API, reset-admin-password) ends every session issued before it.
      if (c.iat < u.sessionsValidAfterSec) return this.counted("jwt", fail("revoked"));
      isAdmin = u.isAdmin;
    } else if (c.provider === "oauth2" && this.store.users.getByUsername(c.username)?.isActive === false) {
      // OAuth users have a row (docs/AUTH.md "Who signs in"): disabling it ends their sessions too.
      return this.counted("jwt", fail("user_disabled"));
    }
    return this.counted(
      "jwt",
      ok({ username: c.username, isAdmin, provider: c.provider, jti: c.jti, expiresAtMs: c.exp * 1000 }),
    );
  }

  /**
   * Static API token (docs/API.md "Authentication"): only when `enable_token_access`; the record
   * must be active, unexpired and under `limit_calls`; each accepted call is counted. The token
   * acts as its owner: the owner's current `users` row decides admin, or the flag recorded at
   * creation for owners without a row.
   */
  verifyApiToken(raw: string): Result<Identity, CredentialFailure> {
    if (!this.config.api_settings.enable_token_access) return this.counted("token", fail("disabled"));
    const t = this.store.tokens.consume(hashApiToken(raw.trim()));
    if (!t) return this.counted("token", fail("token_rejected"));
    const owner = this.store.users.getByUsername(t.username);
    if (owner && !owner.isActive) return this.counted("token", fail("user_disabled"));
    return this.counted(
      "token",
      ok({ username: t.username, isAdmin: owner ? owner.isAdmin : t.ownerIsAdmin, provider: "token", tokenId: t.id }),
    );
  }

  private counted<T>(via: string, r: Result<T, CredentialFailure>): Result<T, CredentialFailure> {
    this.credentialChecks.inc({ via, result: r.ok ? "ok" : r.reason });
    return r;
  }

  /**
   * `DELETE /auth/sessions/{jti}`: the caller's own current session, or another session issued
   * (by this process, or by any replica with a shared store) to the same user (any user's for an
   * admin). Anything else is NOT_FOUND, so session ids of other users cannot be probed.
   */
  async revokeSession(jti: string, caller: Identity): Promise<void> {
    // Kept until the token could no longer verify anyway: its exp plus the verifier's leeway.
    const leewayMs = LEEWAY_SEC * 1000;
    if (caller.jti === jti && caller.expiresAtMs !== undefined) {
      await this.shared.revoke(jti, caller.username, caller.expiresAtMs + leewayMs);
      return;
    }
    const s = await this.shared.issuedSession(jti);
    if (s === undefined || (!caller.isAdmin && s.username.toLowerCase() !== caller.username.toLowerCase())) {
      throw new AppError("NOT_FOUND", "no such session");
    }
    await this.shared.revoke(jti, s.username, s.expMs + leewayMs);
  }

  /** Creates a token for `owner`; the secret is returned here once and never stored. */
  createApiToken(
    owner: Identity,
    input: {
      name: string;
      active?: boolean | undefined;
      expiresAt?: number | null | undefined;
      limitCalls?: number | undefined;
    },
  ): { token: ApiToken; secret: string } {
    const g = generateApiToken();
    const token = this.store.tokens.create({
      name: input.name,
      tokenHash: g.hash,
      tokenPrefix: g.displayPrefix,
      username: owner.username,
      ownerIsAdmin: owner.isAdmin,
      active: input.active,
      expiresAt: input.expiresAt,
      limitCalls: input.limitCalls,
    });
    return { token, secret: g.secret };
  }
}
