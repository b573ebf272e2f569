/**
 * Client-side post-filters `--grep` / `--exclude` (docs/CLI.md "Post-filters") over the rows one
 * search fetched (at most --limit; the server never sees them): plain text matches
 * any field case-insensitively, `field=text` matches one field, a comma separates alternatives
 * (OR). Several `--grep` flags must all match; a row matching any `--exclude` is dropped.
 * `field` may be a dotted path into an object member (`data_extra.user_agent`).
 */
export type Row = Record<string, unknown>;

export interface PostFilterTerm {
  /** Lower-case field path, or undefined for "any field". */
  field?: string;
  /** Lower-case text. */
  text: string;
}

export interface PostFilter {
  /** The pattern as given, for the summary line. */
  source: string;
  terms: PostFilterTerm[];
}

export function parsePostFilter(pattern: string): PostFilter {
  const terms: PostFilterTerm[] = [];
  for (const alt of pattern.split(",")) {
    const a = alt.trim();
    if (a === "") continue;
    const m = /^([A-Za-z_][\w.-]*)=(.*)$/s.exec(a);
    terms.push(m ? { field: m[1]!.toLowerCase(), text: m[2]!.toLowerCase() } : { text: a.toLowerCase() });
  }
  return { source: pattern, terms };
}

/** The text a value is matched against: strings as they are, objects as JSON. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** The value at a dotted, case-insensitive path (`data_extra.from_tag`); undefined when absent. */
function lookup(row: Row, path: string): { found: boolean; value: unknown } {
  let cur: unknown = row;
  for (const seg of path.split(".")) {
    if (cur === null || typeof cur !== "object" || Array.isArray(cur)) return { found: false, value: undefined };
    const obj = cur as Record<string, unknown>;
    const key = seg in obj ? seg : Object.keys(obj).find((k) => k.toLowerCase() === seg);
    if (key === undefined) return { found: false, value: undefined };
    cur = obj[key];
  }
  return { found: true, value: cur };
}

function termMatches(row: Row, t: PostFilterTerm): boolean {
  if (t.field !== undefined) {
    const { found, value } = lookup(row, t.field);
    return found && valueText(value).toLowerCase().includes(t.text);
  }
  return Object.values(row).some((v) => valueText(v).toLowerCase().includes(t.text));
}

export const postFilterMatches = (row: Row, f: PostFilter): boolean => f.terms.some((t) => termMatches(row, t));

export function applyPostFilters<T extends Row>(
  rows: readonly T[],
  grep: readonly PostFilter[],
  exclude: readonly PostFilter[],
): T[] {
  return rows.filter(
    (r) => grep.every((g) => postFilterMatches(r, g)) && !exclude.some((x) => postFilterMatches(r, x)),
  );
}

/**
 * `Post-filter grep="INVITE" exclude="src_ip=10.0.0.9": 12 → 4 rows (filtered the 12 rows fetched)`
 * (stderr). The filters run here, over the rows the search returned; when the search stopped at
 * --limit, later rows were never seen, and the line says so (README "Terminal").
 */
export function postFilterSummary(
  grep: readonly PostFilter[],
  exclude: readonly PostFilter[],
  before: number,
  after: number,
  limit?: { reached: boolean; limit: number },
): string {
  const parts = [
    ...grep.map((g) => `grep=${JSON.stringify(g.source)}`),
    ...exclude.map((x) => `exclude=${JSON.stringify(x.source)}`),
  ];
  const scope = limit?.reached
    ? `filtered only the ${before} rows fetched: the search stopped at --limit ${limit.limit}, so more rows may match; raise --limit or narrow the search`
    : `filtered the ${before} rows fetched`;
  return `Post-filter ${parts.join(" ")}: ${before} → ${after} rows (${scope})`;
}
