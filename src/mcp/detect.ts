/**
 * What the text of a request asks for (docs/MCP.md "Modes", `svc_query`): SQL mode when
 * it says `mode=sql`, `sql:`, `show sql`, `display sql`, `print sql` or `raw sql`; and whether the
 * text is itself a SQL statement, which the tool server refuses (it builds its own SQL).
 */
const DIRECTIVE = /\bmode\s*=\s*sql\b|\bsql\s*:|\b(?:show|display|print|raw)\s+sql\b/gi;

export const asksForSql = (text: string): boolean => new RegExp(DIRECTIVE.source, "i").test(text);

/** The text without its SQL directives (what the parsers read). */
export const withoutDirectives = (text: string): string => text.replace(DIRECTIVE, " ").replace(/\s+/g, " ").trim();

/** Words that only start a statement. */
const STATEMENT = new Set(
  "select with insert drop alter truncate attach detach create grant revoke pragma pivot unpivot deallocate".split(" "),
);
/** Words that start a statement or an English sentence: SQL only with SQL punctuation or a SQL word after them, or alone. */
const AMBIGUOUS = new Set(
  (
    "show set use load call update delete copy from table merge install export import vacuum checkpoint summarize describe explain " +
    "values begin commit rollback reset execute prepare"
  ).split(" "),
);
/** After an ambiguous word: a SQL object word (`SHOW ALL TABLES`, not "show all calls"), `name =`, `name(`, `name TO|FROM|SET`, or one lone name (`LOAD httpfs`). */
const SQL_AFTER = [
  /^\s*\(/,
  /^\s*(?:tables|all\s+tables|databases|schemas|into|from|table|database|schema|extension|secrets?|variable|transaction|select|with|analyze)\b/i,
  /^\s*[\w."]+\s*(?:=|\()/,
];
/** `COPY t TO|FROM …`, `UPDATE t SET …`. */
const SQL_AFTER_WORD: Record<string, RegExp> = { copy: /^\s*[\w."]+\s+(?:to|from)\b/i, update: /^\s*[\w."]+\s+set\b/i };
/** One name or nothing after the word: `LOAD httpfs`, `CHECKPOINT`. */
const LONE_NAME = /^\s*[\w."]*\s*$/;
/** SQL constructs that no plain-language question contains. */
const SQL_ANYWHERE = [
  /(^|\s)--(\s|$)/,
  /\/\*/,
  /;\s*[a-z]/i,
  /\b(?:read_\w+|duckdb_\w+|pragma_\w+|glob|query_table|query|sniff_csv|getenv|parquet_\w+|iceberg_\w+|delta_\w+)\s*\(/i,
  /\binformation_schema\s*\./i,
  /\bunion\s+(?:all\s+)?select\b/i,
  /\bselect\b[\s\S]*\bfrom\b/i,
  // Injection shapes: a tautology (`OR 1=1`, `' OR 'a'='a`), a quote closed before UNION or `;`.
  /\b(?:or|and)\s+(['"]?)(\w+)\1\s*=\s*['"]?\2\b/i,
  /['"]\s*(?:union\b|;)/i,
];

/** true when the text, its directives removed, is (or carries) a SQL statement. */
export function isSqlStatement(text: string): boolean {
  const t = withoutDirectives(text);
  if (/^[(]/.test(t)) return true;
  if (SQL_ANYWHERE.some((re) => re.test(t))) return true;
  const m = /^([A-Za-z_]+)(?=[\s(*"]|$)/.exec(t);
  if (!m) return false;
  const word = m[1]!.toLowerCase();
  if (STATEMENT.has(word)) return true;
  if (!AMBIGUOUS.has(word)) return false;
  const rest = t.slice(m[0].length);
  return (
    SQL_AFTER.some((re) => re.test(rest)) ||
    SQL_AFTER_WORD[word]?.test(rest) === true ||
    (word !== "from" && word !== "show" && LONE_NAME.test(rest))
  );
}
