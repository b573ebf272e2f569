import { AppError } from "../../core/index.ts";
import { otlpCondition } from "./otlp-filters.ts";

/**
 * Structured search → SQL WHERE (docs/API.md "Search form request"). Pure: values are always bound
 * parameters (`$n`), never spliced; identifiers come from fixed tables below, never from input.
 */
export type FilterValue = string | number | boolean | null | Array<string | number>;

export interface VirtualField {
  path: string;
  match: "like" | "equals" | "absent" | "present";
}

export interface FilterInput {
  protoType: number;
  /** call / registration / default, or `<schema>__<table>` for proto 300. */
  eventType: string;
  filter: Record<string, unknown>;
  /** Virtual fields of the mapping, by field id (from mapping_schema). */
  virtualFields: ReadonlyMap<string, VirtualField>;
  /** Columns the table has (lower case). */
  columns: ReadonlySet<string>;
}

export interface WhereClause {
  sql: string;
  params: Array<string | number>;
  /** Filter keys that produced a condition (the rest were ignored, rule 2). */
  applied: string[];
  /**
   * Exact `session_id` values every matching row must have one of (a Call-ID filter without `%`
   * on a table where it does not also match `cid`): lets the scan prune files by statistics.
   */
  sessionIds?: string[];
  /**
   * Exact values of VARCHAR columns every matching row has (Call-ID, caller, callee, IPs; each
   * entry AND-ed, inside one: some column equals some value): the scan skips files whose bloom
   * filters rule one out (docs/ARCHITECTURE.md "Point lookups").
   */
  lookups?: Array<{ columns: string[]; values: string[] }>;
  /**
   * Every condition is one of `lookups` (nothing else to check on a row): a search may find the
   * rows by the lookups alone (docs/ARCHITECTURE.md "Lookups by page").
   */
  lookupsOnly?: true;
}

class Builder {
  readonly parts: string[] = [];
  readonly params: Array<string | number> = [];
  readonly applied: string[] = [];
  sessionIds?: string[];
  lookups?: Array<{ columns: string[]; values: string[] }>;
  /** Records an exact lookup when no value is a LIKE pattern (the condition itself is built apart). */
  lookup(columns: string[], values: string[], like: boolean): void {
    if (values.length === 0 || (like && values.some((v) => v.includes("%")))) return;
    (this.lookups ??= []).push({ columns, values });
  }
  p(v: string | number): string {
    this.params.push(v);
    return `$${this.params.length}`;
  }
  add(sql: string, key: string): void {
    this.parts.push(sql);
    this.applied.push(key);
  }
}

/** `a;b` and arrays → list of non-empty strings. */
export function splitValues(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const x of raw) {
    if (x === null || x === undefined) continue;
    for (const s of String(x).split(";")) {
      const t = s.trim();
      if (t !== "") out.push(t);
    }
  }
  return out;
}

/** Exact match unless the value has `%` (LIKE wildcard); several values OR-ed. */
function exactOrLike(b: Builder, exprs: string[], values: string[]): string | undefined {
  if (values.length === 0) return undefined;
  const ors: string[] = [];
  for (const v of values) {
    const op = v.includes("%") ? "LIKE" : "=";
    const ph = b.p(v);
    for (const e of exprs) ors.push(`${e} ${op} ${ph}`);
  }
  return `(${ors.join(" OR ")})`;
}

const jsonPath = (path: string): string => {
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path))
    throw new AppError("VALIDATION", `virtual path "${path}" is invalid`);
  // Hyphenated keys are quoted in the JSON path (spec "Virtual block").
  return (
    "$." +
    path
      .split(".")
      .map((seg) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg) ? seg : `"${seg}"`))
      .join(".")
  );
};

const extra = (path: string) => `json_extract_string(data_extra, '${jsonPath(path)}')`;

const toInt = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  // Safe integers only: 1e25 is an integer to JS and a bind error to DuckDB (a 500, not a 400).
  return Number.isSafeInteger(n) ? n : undefined;
};

function intList(b: Builder, col: string, v: unknown, key: string): string | undefined {
  const vals = splitValues(v).map((x) => toInt(x));
  if (vals.some((x) => x === undefined))
    throw new AppError("VALIDATION", `filter.${key}: expected integers`, { details: { fields: [`filter.${key}`] } });
  if (vals.length === 0) return undefined;
  return vals.length === 1 ? `${col} = ${b.p(vals[0]!)}` : `${col} IN (${vals.map((x) => b.p(x!)).join(", ")})`;
}

/**
 * Response codes: integers, or a class `4xx` (400-499), several OR-ed (docs/API.md "Search
 * filters"; the Ask parser's "server errors" is `5xx`, docs/MCP.md "Filters").
 */
function responseCodes(b: Builder, v: unknown, key: string): string | undefined {
  const vals = splitValues(v);
  const classes = vals.filter((x) => /^[1-6]xx$/i.test(x)).map((x) => Number(x[0]) * 100);
  const codes = vals.filter((x) => !/^[1-6]xx$/i.test(x));
  const ors = classes.map((c) => `response_code BETWEEN ${b.p(c)} AND ${b.p(c + 99)}`);
  const exact = codes.length > 0 ? intList(b, "response_code", codes.join(";"), key) : undefined;
  if (exact) ors.push(exact);
  if (ors.length === 0) return undefined;
  return ors.length === 1 ? ors[0] : `(${ors.join(" OR ")})`;
}

function strList(b: Builder, col: string, v: unknown): string | undefined {
  const vals = splitValues(v);
  if (vals.length === 0) return undefined;
  return vals.length === 1 ? `${col} = ${b.p(vals[0]!)}` : `${col} IN (${vals.map((x) => b.p(x)).join(", ")})`;
}

function contains(b: Builder, expr: string, v: unknown): string | undefined {
  const vals = splitValues(v);
  if (vals.length === 0) return undefined;
  return `(${vals.map((x) => `contains(${expr}, ${b.p(x)})`).join(" OR ")})`;
}

/** SIP-family filters (proto 1 and the other HEP tables, which share the base columns). */
function hepCondition(b: Builder, key: string, v: unknown, input: FilterInput): string | undefined {
  const has = (c: string) => input.columns.has(c);
  switch (key) {
    case "call_id":
    case "session_id":
    case "sid": {
      const cols = input.eventType === "default" || input.protoType !== 1 ? ["session_id", "cid"] : ["session_id"];
      const values = splitValues(v);
      if (cols.length === 1 && values.length > 0 && values.every((x) => !x.includes("%")))
        b.sessionIds = [...(b.sessionIds ?? []), ...values];
      b.lookup(cols, values, true);
      return exactOrLike(b, cols, values);
    }
    case "from_user":
    case "caller":
      b.lookup(["caller"], splitValues(v), true);
      return exactOrLike(b, ["caller"], splitValues(v));
    case "to_user":
    case "callee":
      b.lookup(["callee"], splitValues(v), true);
      return exactOrLike(b, ["callee"], splitValues(v));
    case "method":
    case "methods":
      return strList(
        b,
        "method",
        splitValues(v).map((m) => m.toUpperCase()),
      );
    case "response_code":
    case "response_codes":
      return responseCodes(b, v, key);
    case "cseq_method":
      return strList(
        b,
        "cseq_method",
        splitValues(v).map((m) => m.toUpperCase()),
      );
    case "src_ip":
    case "dst_ip":
      b.lookup([key], splitValues(v), false);
      return strList(b, key, v);
    case "ip": {
      // Either end of the message (docs/MCP.md "Filters": an address named without from/to).
      b.lookup(["src_ip", "dst_ip"], splitValues(v), false);
      const s = strList(b, "src_ip", v);
      return s === undefined ? undefined : `(${s} OR ${strList(b, "dst_ip", v)})`;
    }
    case "src_port":
    case "dst_port":
      return intList(b, key, v, key);
    case "user_agent":
      return contains(b, has("user_agent") ? "user_agent" : extra("user_agent"), v);
    case "ruri_user":
      return contains(b, extra("request_uri"), v);
    case "node_name":
      return strList(b, extra("node_name"), v);
    case "node":
    case "node_id": {
      const vals = splitValues(v);
      if (vals.length === 0) return undefined;
      const ors = vals.map((x) =>
        toInt(x) !== undefined
          ? `(node_id = ${b.p(toInt(x)!)} OR ${extra("node_name")} = ${b.p(x)})`
          : `${extra("node_name")} = ${b.p(x)}`,
      );
      return `(${ors.join(" OR ")})`;
    }
    case "capture_id": {
      // HEP ingest writes the capture id into node_id and data_extra.capture_id; rows from other
      // writers (line protocol into a HEP table) may carry it in data_extra only (docs/API.md "Search form request").
      const ids = splitValues(v).map((x) => toInt(x));
      if (ids.some((x) => x === undefined))
        throw new AppError("VALIDATION", `filter.${key}: expected integers`, {
          details: { fields: [`filter.${key}`] },
        });
      if (ids.length === 0) return undefined;
      return `(${ids.map((id) => `node_id = ${b.p(id!)} OR ${extra("capture_id")} = ${b.p(String(id))}`).join(" OR ")})`;
    }
    case "payload":
      return contains(b, "payload", v);
    case "protocol":
      return strList(
        b,
        "protocol",
        splitValues(v).map((x) => x.toUpperCase()),
      );
    case "aor":
    case "contact":
      return has(key) ? exactOrLike(b, [key], splitValues(v)) : undefined;
    case "expires":
      return has("expires") ? intList(b, "expires", v, key) : undefined;
    case "from_tag":
    case "to_tag":
      return strList(b, extra(key), v);
    default:
      return undefined;
  }
}

function virtualConditions(b: Builder, input: FilterInput): void {
  const f = input.filter;
  const lookup = (id: string) => {
    const vf = input.virtualFields.get(id);
    if (!vf) return undefined; // unknown virtual ids are ignored like other unknown keys
    return vf;
  };
  if (f.virtual && typeof f.virtual === "object" && !Array.isArray(f.virtual)) {
    for (const [id, value] of Object.entries(f.virtual as Record<string, unknown>)) {
      const vf = lookup(id);
      if (!vf || value === null || value === undefined || value === "") continue;
      const expr = extra(vf.path);
      if (vf.match === "equals") b.add(`${expr} = ${b.p(String(value))}`, `virtual.${id}`);
      else b.add(`contains(${expr}, ${b.p(String(value))})`, `virtual.${id}`);
    }
  }
  for (const [list, present] of [
    [f.virtual_absent, false],
    [f.virtual_present, true],
  ] as const) {
    if (!Array.isArray(list)) continue;
    for (const id of list) {
      const vf = lookup(String(id));
      if (!vf) continue;
      const expr = extra(vf.path);
      b.add(
        present
          ? `(${expr} IS NOT NULL AND ${expr} <> '' AND ${expr} <> 'null')`
          : `(${expr} IS NULL OR ${expr} = '' OR ${expr} = 'null')`,
        present ? `virtual_present.${id}` : `virtual_absent.${id}`,
      );
    }
  }
}

/** Keys of the filter object that are routing, not conditions. */
const NOT_CONDITIONS = new Set(["proto_type", "event_type", "virtual", "virtual_absent", "virtual_present"]);

/** The builder's lookups on columns the table has (a missing one fails the statement anyway). */
function lookupsOf(b: Builder, columns: ReadonlySet<string>): Pick<WhereClause, "lookups"> {
  const l = b.lookups?.filter((x) => x.columns.every((c) => columns.has(c)));
  return l?.length ? { lookups: l } : {};
}

export function buildWhere(input: FilterInput): WhereClause {
  const b = new Builder();
  const otlpOrLp = input.protoType >= 200 && input.protoType <= 202;
  const lp = input.protoType === 300;
  let lookupConditions = 0;
  for (const [key, value] of Object.entries(input.filter)) {
    if (NOT_CONDITIONS.has(key) || value === undefined || value === null || value === "") continue;
    if (lp) {
      // Rule 4: line protocol takes only a payload substring over the whole row. DuckDB 1.5 cannot
      // expand ROW(*) ("Can't pack nothing into a struct"), so the row's columns are spelled out.
      if (key === "payload") {
        const row = [...input.columns].map((c) => `"${c.replaceAll('"', '""')}"`).join(", ");
        const c = contains(b, `CAST(ROW(${row}) AS VARCHAR)`, value);
        if (c) b.add(c, key);
      }
      continue;
    }
    const before = b.lookups?.length ?? 0;
    const c = otlpOrLp ? otlpCondition(b, key, value, input.columns) : hepCondition(b, key, value, input);
    if (c) b.add(c, key);
    // A lookup is recorded only when its condition is exactly "some column equals some value".
    if (c && (b.lookups?.length ?? 0) > before) lookupConditions++;
  }
  // Rule 3: no virtual handling for 200-202 and 300.
  if (!otlpOrLp && !lp) virtualConditions(b, input);
  const lookups = lookupsOf(b, input.columns);
  const lookupsOnly =
    b.parts.length > 0 && lookupConditions === b.parts.length && lookups.lookups?.length === lookupConditions;
  return {
    sql: b.parts.length ? b.parts.join(" AND ") : "true",
    params: b.params,
    applied: b.applied,
    ...(b.sessionIds ? { sessionIds: b.sessionIds } : {}),
    ...lookups,
    ...(lookupsOnly ? { lookupsOnly: true as const } : {}),
  };
}
