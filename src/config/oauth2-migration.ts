/**
 * The deprecated array `coordinator.oauth2_providers` (docs/AUTH.md "OAuth 2.0", migration): the
 * first *usable* enabled row, by lowest `position` then `name`, becomes `coordinator.oauth2_provider`.
 * Usable = the flow can run with it: name, client_id, the three endpoints and redirect_url are set,
 * and a client_secret unless use_pkce. A half-filled row listed first no longer hides a complete one.
 */
type Row = Record<string, unknown>;

const filled = (r: Readonly<Row>, k: string) => typeof r[k] === "string" && (r[k] as string).trim() !== "";

/** The keys a provider row still lacks for the authorization-code flow (empty = complete). */
export function oauth2MissingKeys(r: Readonly<Row>): string[] {
  const missing = ["name", "client_id", "auth_url", "token_url", "profile_url", "redirect_url"].filter(
    (k) => !filled(r, k),
  );
  if (r.use_pkce !== true && !filled(r, "client_secret")) missing.push("client_secret (or use_pkce)");
  return missing;
}

export const oauth2RowUsable = (r: Readonly<Row>): boolean => r.enable === true && oauth2MissingKeys(r).length === 0;

/** The row to migrate, or undefined when no enabled row is usable. */
export function pickOauth2Row(rows: readonly Row[]): Row | undefined {
  const usable = rows.filter(oauth2RowUsable);
  usable.sort(
    (a, b) => Number(a.position ?? 0) - Number(b.position ?? 0) || String(a.name).localeCompare(String(b.name)),
  );
  return usable[0];
}
