import { oauth2MissingKeys, type Config } from "../config/index.ts";
import { errorMessage, fail, ok, type Logger, type Result } from "../core/index.ts";
import type { User, UsersRepo } from "../settings/index.ts";
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from "./passwords.ts";

export type CoordinatorConfig = Config["coordinator"];

/** Who logged in, as every provider reports it. */
export interface AuthUser
  extends Pick<User, "username" | "email" | "firstName" | "lastName" | "userGroup" | "isAdmin"> {
  /** `users.id` when the user has a row (internal users, provisioned OAuth users). */
  id?: string | undefined;
  provider: "internal" | "ldap" | "oauth2";
}

/**
 * Every failure is reported to the client as the same generic 401; the reason is for metrics. A
 * backend that cannot be reached throws AppError UNAVAILABLE instead (503, docs/AUTH.md).
 */
export type AuthFailure = "bad_credentials" | "inactive" | "unavailable" | "not_in_group";
export type AuthResult = Result<AuthUser, AuthFailure>;

/**
 * A password login backend (docs/API.md "Authentication", password login). Internal is built in; LDAP registers one
 * with `AuthService.registerProvider` when `coordinator.ldap` is enabled and has a host.
 */
export interface PasswordProvider {
  readonly type: "internal" | "ldap";
  authenticate(username: string, password: string): Promise<AuthResult>;
}

/**
 * `type` omitted or `internal`: only the `users` table is consulted. Every path (unknown user, wrong
 * password, disabled account, any stored hash form) runs exactly one bcrypt verify; a hash that is
 * not plain bcrypt at the current cost is replaced by one at the first successful login.
 */
export class InternalPasswordProvider implements PasswordProvider {
  readonly type = "internal" as const;

  constructor(
    private readonly users: UsersRepo,
    private readonly logger?: Logger,
  ) {}

  async authenticate(username: string, password: string): Promise<AuthResult> {
    const u = this.users.getWithSecret(username);
    if (!u) {
      await verifyAgainstDummy(password);
      return fail("bad_credentials");
    }
    if (!(await verifyPassword(password, u.passwordHash))) return fail("bad_credentials");
    if (!u.isActive) return fail("inactive");
    if (needsRehash(u.passwordHash)) await this.rehash(u.id, u.username, u.passwordHash, password);
    return ok({
      id: u.id,
      username: u.username,
      email: u.email,
      firstName: u.firstName,
      lastName: u.lastName,
      userGroup: u.userGroup,
      isAdmin: u.isAdmin,
      provider: "internal",
    });
  }

  /** The login succeeds even if the rehash fails; it is tried again at the next login. */
  private async rehash(id: string, username: string, old: string, password: string): Promise<void> {
    try {
      if (this.users.replacePasswordHash(id, old, await hashPassword(password)))
        this.logger?.info("password rehashed with bcrypt at login", { username });
    } catch (e) {
      this.logger?.warn("could not rehash a password at login", { username, error: errorMessage(e) });
    }
  }
}

export interface PasswordMethodInfo {
  enable: boolean;
  name: string;
  position: number;
  type: "internal" | "ldap";
}

export interface OAuth2MethodInfo {
  enable: boolean;
  name: string;
  position: number;
  type: string;
  provider_name: string;
  provider_image: string;
  /** The coordinator's redirect endpoint, which sends the browser on to the authorize URL. */
  url: string;
  auto_redirect: boolean;
}

export interface ProvidersInfo {
  internal: PasswordMethodInfo;
  ldap: PasswordMethodInfo;
  oauth2: OAuth2MethodInfo[];
}

export const ldapUsable = (c: CoordinatorConfig): boolean => c.ldap.enable && c.ldap.host.trim() !== "";

/** The keys an enabled `oauth2_provider` still lacks for the authorization-code flow (empty = complete). */
export const oauth2Missing = (c: CoordinatorConfig): string[] => oauth2MissingKeys(c.oauth2_provider);

/** Enabled and complete: the authorization-code flow can run with this row. */
export const oauth2Usable = (c: CoordinatorConfig): boolean =>
  c.oauth2_provider.enable && oauth2Missing(c).length === 0;

/** `GET /auth/providers` data (docs/AUTH.md "Logins: internal users, LDAP and OAuth 2.0"). */
export function describeProviders(c: CoordinatorConfig, apiBase: string): ProvidersInfo {
  const passwordOn = !c.auth.disable_password_login;
  const p = c.oauth2_provider;
  return {
    internal: { enable: passwordOn, name: "Internal", position: c.auth.internal_position, type: "internal" },
    ldap: { enable: passwordOn && ldapUsable(c), name: "LDAP", position: c.ldap.position, type: "ldap" },
    oauth2: oauth2Usable(c)
      ? [
          {
            enable: true,
            name: p.name,
            position: p.position,
            type: p.type || "oauth2",
            provider_name: p.provider_name || p.name,
            provider_image: p.provider_image,
            url: `${apiBase}/auth/oauth2/${encodeURIComponent(p.name)}/redirect`,
            auto_redirect: p.auto_redirect,
          },
        ]
      : [],
  };
}
