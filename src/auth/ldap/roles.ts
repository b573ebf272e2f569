/**
 * Admin or normal user from the groups an LDAP user belongs to (docs/AUTH.md, "LDAP groups").
 * Pure: the group lookup itself is in provider.ts.
 */

export interface RoleRules {
  /** Group DN (has `=`) or group name (compared with the first RDN value of each group DN). */
  adminGroup: string;
  userGroup: string;
  /** Admin when the lookup failed or found no group. */
  adminMode: boolean;
  /** Login allowed when the lookup failed or found no group. */
  userMode: boolean;
}

export interface Role {
  allowed: boolean;
  isAdmin: boolean;
  /** `user_group` of the session: the configured group that matched, or "". */
  group: string;
}

/** `CN=Admins, OU=Groups,DC=x` → `cn=admins,ou=groups,dc=x` (case and spaces after separators). */
const normalizeDn = (dn: string): string =>
  dn
    .split(/(?<!\\),/)
    .map((rdn) => rdn.trim().replace(/\s*=\s*/, "="))
    .join(",")
    .toLowerCase();

/** The value of the first RDN (`cn=admins,ou=groups` → `admins`), or the value itself when it is no DN. */
function groupName(value: string): string {
  const first = value.split(/(?<!\\),/)[0] ?? "";
  const eq = first.indexOf("=");
  return (eq < 0 ? first : first.slice(eq + 1)).trim().toLowerCase();
}

/** True when one of `groups` (DNs or names) is `wanted` (a DN or a name). */
export function inGroup(groups: readonly string[], wanted: string): boolean {
  if (wanted.trim() === "") return false;
  if (wanted.includes("=")) {
    const w = normalizeDn(wanted);
    return groups.some((g) => normalizeDn(g) === w);
  }
  const w = wanted.trim().toLowerCase();
  return groups.some((g) => groupName(g) === w);
}

/**
 * `groups` is `undefined` when the lookup failed. With groups found: admin only in `admin_group`,
 * login only in `user_group` or `admin_group` (every user when `user_group` is empty). With the
 * lookup failed or empty: `admin_mode` decides admin and `user_mode` decides login (every user
 * when `user_group` is empty).
 */
export function decideRole(groups: readonly string[] | undefined, r: RoleRules): Role {
  const restricted = r.userGroup.trim() !== "";
  if (groups === undefined || groups.length === 0) {
    return { allowed: r.adminMode || r.userMode || !restricted, isAdmin: r.adminMode, group: "" };
  }
  const isAdmin = inGroup(groups, r.adminGroup);
  const isUser = inGroup(groups, r.userGroup);
  return {
    allowed: isAdmin || isUser || !restricted,
    isAdmin,
    group: isAdmin ? r.adminGroup : isUser ? r.userGroup : "",
  };
}
