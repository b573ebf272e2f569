/**
 * What the coordinator reads from the identity provider's profile (user-info) answer (docs/AUTH.md
 * "OAuth 2.0", user mapping). Pure functions over the decoded JSON.
 */
export type Profile = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");

/** `preferred_username`; else the email with `@` replaced by `_`; else `oidc-<sub>`; else nothing usable. */
export function usernameOf(p: Profile): string | undefined {
  const preferred = str(p.preferred_username);
  if (preferred !== "") return preferred;
  const email = str(p.email);
  if (email !== "") return email.replaceAll("@", "_");
  const sub = str(p.sub);
  return sub !== "" ? `oidc-${sub}` : undefined;
}

export const emailOf = (p: Profile): string => str(p.email);

/** The groups claim: an array of strings, or of objects carrying `name` or `group_name`; a single string counts as one group. */
export function groupsOf(p: Profile, claim: string): string[] {
  const raw = p[claim || "groups"];
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
  const out: string[] = [];
  for (const g of list) {
    const name =
      typeof g === "object" && g !== null
        ? str((g as Record<string, unknown>).name) || str((g as Record<string, unknown>).group_name)
        : str(g);
    if (name !== "") out.push(name);
  }
  return out;
}

/** Membership in `admin_groups`: names compared exactly, as the provider sends them. */
export const inAdminGroup = (groups: readonly string[], adminGroups: readonly string[]): boolean =>
  groups.some((g) => adminGroups.includes(g));

export function namesOf(p: Profile): { firstName: string; lastName: string } {
  const first = str(p.given_name);
  const last = str(p.family_name);
  if (first !== "" || last !== "") return { firstName: first, lastName: last };
  const full = str(p.name);
  const cut = full.lastIndexOf(" ");
  return cut > 0 ? { firstName: full.slice(0, cut), lastName: full.slice(cut + 1) } : { firstName: full, lastName: "" };
}

/** The `picture` claim when it is an http(s) URL. */
export function pictureOf(p: Profile): string | undefined {
  const v = str(p.picture);
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}
