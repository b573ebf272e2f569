/**
 * The deprecated array `coordinator.oauth2_providers` (docs/AUTH.md "OAuth 2.0", migration): the
 * first *usable* enabled row, by lowest `position` then `name`, becomes `coordinator.oauth2_provider`.
 * Usable = the flow can run with it: name, client_id, the three endpoints and redirect_url are set,
 * and a client_secret unless use_pkce. A half-filled row listed first no longer hides a complete one.
 */
type Row = Record<string, unknown>;

const filled = (r: Row, k: string) => typeof r[k] === "string" && (r[k] as string).trim() !== "";

export function oauth2RowUsable(r: Row): boolean {
  const complete = ["name", "client_id", "auth_url", "token_url", "profile_url", "redirect_url"].every((k) => filled(r, k));
  return r.enable === true && complete && (r.use_pkce === true || filled(r, "client_secret"));
}

/** The row to migrate, or undefined when no enabled row is usable. */
export function pickOauth2Row(rows: readonly Row[]): Row | undefined {
  const usable = rows.filter(oauth2RowUsable);
  usable.sort((a, b) => Number(a.position ?? 0) - Number(b.position ?? 0) || String(a.name).localeCompare(String(b.name)));
  return usable[0];
}
