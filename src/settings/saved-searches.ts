import { invalidField } from "./db.ts";

/**
 * Saved searches, the per-user setting `search` / `saved` (docs/DASHBOARD.md "Saved searches"):
 * the form values of a search widget under a name, per protocol (`hepid` + `profile`), with an
 * optional relative time range. One setting row holds the whole list, so a user's searches are
 * read and written together; limits keep the row small (it is read with every settings list).
 */
export const SAVED_SEARCHES_MAX = 100;
export const SAVED_SEARCH_NAME_MAX = 80;
export const SAVED_SEARCH_FILTERS_MAX = 64;
export const SAVED_SEARCH_VALUE_MAX = 4096;
export const SAVED_SEARCH_LIST_MAX = 100;
/** One year: the widest relative range a saved search may carry. */
export const SAVED_SEARCH_RANGE_MAX_MIN = 527_040;
export const SAVED_SEARCH_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
/** Field ids of the mappings (docs/API.md "Field object"): letters, digits, `_ . : -`. */
export const SAVED_SEARCH_FIELD_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

export type SavedFilterValue = string | string[] | boolean;

export interface SavedSearch {
  id: string;
  name: string;
  hepid: number;
  profile: string;
  filters: Record<string, SavedFilterValue>;
  /** A relative range ("Last N minutes") restored with the search; null keeps the current range. */
  range: { minutes: number } | null;
}

export interface SavedSearches {
  items: SavedSearch[];
}

const fail = (field: string, why: string): never => {
  throw invalidField(field, why);
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function filterValue(v: unknown, at: string): SavedFilterValue | undefined {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    if (v.length > SAVED_SEARCH_VALUE_MAX) return fail(at, `must be at most ${SAVED_SEARCH_VALUE_MAX} characters`);
    return v === "" ? undefined : v;
  }
  if (Array.isArray(v)) {
    if (v.length > SAVED_SEARCH_LIST_MAX) return fail(at, `must have at most ${SAVED_SEARCH_LIST_MAX} values`);
    const list = v.map((x, i) =>
      typeof x === "string" && x.length <= SAVED_SEARCH_VALUE_MAX
        ? x
        : fail(`${at}[${i}]`, `must be a string of at most ${SAVED_SEARCH_VALUE_MAX} characters`),
    );
    return list.length === 0 ? undefined : list;
  }
  return fail(at, "must be a string, an array of strings or a boolean");
}

function savedSearch(item: unknown, at: string): SavedSearch {
  if (!isObject(item)) return fail(at, "must be an object");
  const id =
    typeof item.id === "string" && SAVED_SEARCH_ID_RE.test(item.id)
      ? item.id
      : fail(`${at}.id`, "must be 1 to 64 letters, digits, _ or -");
  const name = typeof item.name === "string" ? item.name.trim() : "";
  if (name === "" || name.length > SAVED_SEARCH_NAME_MAX)
    fail(`${at}.name`, `must be 1 to ${SAVED_SEARCH_NAME_MAX} characters (not only spaces)`);
  const hepid =
    Number.isInteger(item.hepid) && (item.hepid as number) >= 0 && (item.hepid as number) <= 65535
      ? (item.hepid as number)
      : fail(`${at}.hepid`, "must be an integer 0..65535");
  const profile =
    typeof item.profile === "string" && item.profile.length >= 1 && item.profile.length <= 128
      ? item.profile
      : fail(`${at}.profile`, "must be 1 to 128 characters");
  const rawFilters = item.filters ?? {};
  if (!isObject(rawFilters)) return fail(`${at}.filters`, "must be an object of field id → value");
  const keys = Object.keys(rawFilters);
  if (keys.length > SAVED_SEARCH_FILTERS_MAX)
    fail(`${at}.filters`, `must have at most ${SAVED_SEARCH_FILTERS_MAX} fields`);
  const filters: Record<string, SavedFilterValue> = {};
  for (const k of keys) {
    if (!SAVED_SEARCH_FIELD_RE.test(k)) fail(`${at}.filters`, `"${k.slice(0, 40)}" is not a field id`);
    const v = filterValue(rawFilters[k], `${at}.filters.${k}`);
    if (v !== undefined) filters[k] = v;
  }
  let range: SavedSearch["range"] = null;
  if (item.range !== undefined && item.range !== null) {
    const m = isObject(item.range) ? item.range.minutes : undefined;
    if (!Number.isInteger(m) || (m as number) < 1 || (m as number) > SAVED_SEARCH_RANGE_MAX_MIN) {
      return fail(
        `${at}.range.minutes`,
        `must be an integer 1..${SAVED_SEARCH_RANGE_MAX_MIN} (a relative range; null for none)`,
      );
    }
    range = { minutes: m as number };
  }
  return { id, name, hepid, profile, filters, range };
}

/** search.saved: `{items: SavedSearch[]}`; ids unique, names unique per protocol (case-insensitive). */
export function validateSavedSearches(input: unknown): SavedSearches {
  if (!isObject(input)) return fail("data", "must be an object");
  const list = input.items ?? [];
  if (!Array.isArray(list)) return fail("data.items", "must be an array");
  if (list.length > SAVED_SEARCHES_MAX)
    return fail("data.items", `must have at most ${SAVED_SEARCHES_MAX} saved searches`);
  const items = list.map((x, i) => savedSearch(x, `data.items[${i}]`));
  const ids = new Set<string>();
  const names = new Set<string>();
  items.forEach((s, i) => {
    if (ids.has(s.id)) fail(`data.items[${i}].id`, `"${s.id}" is used twice`);
    ids.add(s.id);
    const key = `${s.hepid}/${s.profile}/${s.name.toLowerCase()}`;
    if (names.has(key)) fail(`data.items[${i}].name`, `"${s.name}" is used twice for ${s.profile} (HEP ${s.hepid})`);
    names.add(key);
  });
  return { items };
}
