import { Client, InappropriateAuthError, InvalidCredentialsError, UnwillingToPerformError, type Entry } from "ldapts";
import { AppError, errorMessage, fail, ok, type Logger } from "../../core/index.ts";
import type { AuthResult, AuthUser, PasswordProvider } from "../providers.ts";
import { escapeDnValue, escapeFilterValue, fillTemplate } from "./escape.ts";
import { describeFailure, ldapTargets, tlsOptions, type LdapConfig, type LdapTarget } from "./hosts.ts";
import { decideRole } from "./roles.ts";

/** Waits on one server (docs/AUTH.md, LDAP): a dead host costs at most this before the next is tried. */
const CONNECT_TIMEOUT_MS = 5000;
const OPERATION_TIMEOUT_MS = 10_000;

/** Attributes always read besides `attributes` and `group_attributes`: the session's names. */
const NAME_ATTRIBUTES = ["uid", "mail", "givenName", "sn", "cn"];

/** This server could not be used (down, TLS, refused service bind); the next one is tried. */
class HostFailure extends Error {}

/** A user bind that means "wrong name or password", not "server broken". */
const isWrongPassword = (e: unknown): boolean =>
  e instanceof InvalidCredentialsError || e instanceof InappropriateAuthError || e instanceof UnwillingToPerformError;

function values(entry: Entry, name: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  if (key === undefined || key === "dn") return [];
  const v = entry[key];
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.map((x) => (typeof x === "string" ? x : x.toString("utf8")));
}
const first = (entry: Entry, name: string): string => values(entry, name)[0] ?? "";

/**
 * LDAP password login (docs/AUTH.md "LDAP login"). The `users` table is neither read nor
 * written: the directory decides the password and, through groups, admin or normal user. Hosts are
 * tried in order; a host that cannot be used (connection, TLS, service bind) passes the login to
 * the next, and when none can be used the login answers 503 naming every host and why. Passwords
 * (the user's and `bind_password`) are never logged nor put in an error.
 */
export class LdapPasswordProvider implements PasswordProvider {
  readonly type = "ldap" as const;

  constructor(
    private readonly c: LdapConfig,
    private readonly logger: Logger,
  ) {}

  async authenticate(username: string, password: string): Promise<AuthResult> {
    // An empty password is an unauthenticated bind (RFC 4513 5.1.2), which servers accept as success.
    if (password === "" || username === "") return fail("bad_credentials");
    if (this.c.anonymous && !this.c.user_dn.includes("%s")) {
      throw new AppError(
        "UNAVAILABLE",
        "LDAP login is misconfigured: coordinator.ldap.anonymous needs user_dn with %s",
        { details: { hosts_tried: [] } },
      );
    }
    const tried: Array<{ url: string; reason: string }> = [];
    for (const target of ldapTargets(this.c)) {
      try {
        return await this.onHost(target, username, password);
      } catch (e) {
        if (!(e instanceof HostFailure)) throw e;
        tried.push({ url: target.url, reason: e.message });
        this.logger.warn("LDAP server could not be used", { url: target.url, reason: e.message });
      }
    }
    const list = tried.map((t) => `${t.url} (${t.reason})`).join("; ");
    throw new AppError("UNAVAILABLE", `LDAP login is unavailable: no LDAP server could be used; tried ${list}`, {
      details: { hosts_tried: tried.map((t) => t.url) },
    });
  }

  /** One server: connect (LDAPS or StartTLS), then the search-then-bind or the `user_dn` bind. */
  private async onHost(target: LdapTarget, username: string, password: string): Promise<AuthResult> {
    const c = this.c;
    const client = new Client({
      url: target.url,
      connectTimeout: CONNECT_TIMEOUT_MS,
      timeout: OPERATION_TIMEOUT_MS,
      strictDN: false,
      ...(c.use_ssl ? { tlsOptions: tlsOptions(c, target) } : {}),
    });
    const step = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        throw new HostFailure(describeFailure(c.use_ssl ? `LDAPS ${name}` : name, e));
      }
    };
    try {
      if (!c.use_ssl && !c.skip_tls) await step("StartTLS", () => client.startTLS(tlsOptions(c, target)));
      return c.anonymous
        ? await this.directBind(client, step, username, password)
        : await this.searchThenBind(client, step, username, password);
    } finally {
      await client.unbind().catch(() => undefined);
    }
  }

  private async searchThenBind(client: Client, step: Step, username: string, password: string): Promise<AuthResult> {
    const c = this.c;
    if (c.bind_dn !== "") await step("bind as bind_dn", () => client.bind(c.bind_dn, c.bind_password));
    const filter = fillTemplate(c.user_filter || "(uid=%s)", escapeFilterValue(username));
    const found = await step("user search", () =>
      client.search(c.base, { scope: "sub", filter, attributes: this.attributes() }),
    );
    if (found.searchEntries.length !== 1) {
      if (found.searchEntries.length > 1)
        this.logger.warn("LDAP user_filter matched more than one entry; login refused", {
          username,
          entries: found.searchEntries.length,
        });
      return fail("bad_credentials");
    }
    const entry = found.searchEntries[0] as Entry;
    // Looked up with the service account, before the user bind changes the connection's identity.
    const groups = await this.groupsOf(client, entry, username);
    const bound = await this.userBind(client, step, entry.dn, password);
    return bound ?? this.verdict(entry, username, groups);
  }

  private async directBind(client: Client, step: Step, username: string, password: string): Promise<AuthResult> {
    const dn = fillTemplate(this.c.user_dn, escapeDnValue(username));
    const bound = await this.userBind(client, step, dn, password);
    if (bound) return bound;
    let entry: Entry = { dn };
    try {
      const r = await client.search(dn, { scope: "base", filter: "(objectClass=*)", attributes: this.attributes() });
      entry = r.searchEntries[0] ?? entry;
    } catch (e) {
      this.logger.warn("LDAP user entry could not be read after the bind; names stay empty", {
        dn,
        error: errorMessage(e),
      });
    }
    return this.verdict(entry, username, await this.groupsOf(client, entry, username));
  }

  /** `undefined` when bound; a failed result for a wrong password; throws HostFailure when the server broke. */
  private async userBind(client: Client, step: Step, dn: string, password: string): Promise<AuthResult | undefined> {
    try {
      await client.bind(dn, password);
      return undefined;
    } catch (e) {
      if (isWrongPassword(e)) return fail("bad_credentials");
      return await step("user bind", () => Promise.reject(e));
    }
  }

  private verdict(entry: Entry, username: string, groups: string[] | undefined): AuthResult {
    const c = this.c;
    const role = decideRole(groups, {
      adminGroup: c.admin_group,
      userGroup: c.user_group,
      adminMode: c.admin_mode,
      userMode: c.user_mode,
    });
    if (!role.allowed) {
      this.logger.info("LDAP login refused: not in user_group", { username, user_group: c.user_group });
      return fail("not_in_group");
    }
    const cn = first(entry, "cn");
    const user: AuthUser = {
      username: first(entry, "uid") || username,
      email: first(entry, "mail"),
      firstName: first(entry, "givenName") || cn,
      lastName: first(entry, "sn"),
      userGroup: role.group,
      isAdmin: role.isAdmin,
      provider: "ldap",
    };
    return ok(user);
  }

  /**
   * The user's groups: values of `group_attributes` on the user entry, plus the DNs of the entries
   * under `base` that match `group_filter` (`%s` = the login name, or the user's DN with
   * `use_dn_for_group_search`). `undefined` when the search failed.
   */
  private async groupsOf(client: Client, entry: Entry, username: string): Promise<string[] | undefined> {
    const c = this.c;
    const groups = c.group_attributes.flatMap((a) => values(entry, a));
    if (c.group_filter.trim() === "" || c.base.trim() === "") return groups;
    const filter = fillTemplate(c.group_filter, escapeFilterValue(c.use_dn_for_group_search ? entry.dn : username));
    try {
      const r = await client.search(c.base, { scope: "sub", filter, attributes: ["cn"] });
      return [...groups, ...r.searchEntries.map((g) => g.dn)];
    } catch (e) {
      this.logger.warn("LDAP group lookup failed; admin_mode and user_mode decide", {
        username,
        error: errorMessage(e),
      });
      return undefined;
    }
  }

  private attributes(): string[] {
    return [...new Set([...NAME_ATTRIBUTES, ...this.c.attributes, ...this.c.group_attributes])];
  }
}

type Step = <T>(name: string, fn: () => Promise<T>) => Promise<T>;
