/**
 * Parsed points → rows of a line-protocol table (docs/LINE-PROTOCOL.md "Table and column rules" 3-6).
 * Two passes around the table DDL: `planColumns` (before: which columns the batch needs, which keys
 * are refused) and `writePoints` (after: one row per point against the table's current layout,
 * synchronously, so a concurrent schema change cannot land between the layout read and the row).
 */
import type { ColumnType, RowWriter, TableDef } from "../../core/index.ts";
import type { LpField, LpPoint } from "./parse.ts";
import { LP_TIME_COLUMN, MAX_NAME_LENGTH } from "./names.ts";
import type { ColumnWish } from "./tables.ts";
import { INT64_MAX } from "./values.ts";

/** A problem with one line (the whole line, or one key of it) reported in the 400 body. */
export interface LineIssue {
  line: number;
  column?: number;
  /** The tag or field key the issue is about; absent when the whole line was refused. */
  key?: string;
  reason: string;
  message: string;
}

/** Rule 5: the column type a field creates. Tags are always VARCHAR (rule 4). */
export const FIELD_COLUMN_TYPE: Record<LpField["type"], ColumnType> = {
  integer: "int64",
  unsigned: "int64",
  float: "float64",
  boolean: "boolean",
  string: "varchar",
};

/**
 * Rule 5 with the first observed value deciding: an unsigned value that BIGINT cannot hold (above
 * 2^63-1; the reference accepts up to 2^64-1) creates a UBIGINT (`uint64`) column instead of
 * losing the point. Every other unsigned value creates BIGINT, as the spec says
 * (docs/ARCHITECTURE.md "Line-protocol types").
 */
export function fieldColumnType(f: LpField): ColumnType {
  return f.type === "unsigned" && (f.value as bigint) > INT64_MAX ? "uint64" : FIELD_COLUMN_TYPE[f.type];
}

/** Rule 3: `time` (any case: the catalog folds names) is the timestamp column, never a new one. */
const isTimeColumn = (key: string) => key.length === LP_TIME_COLUMN.length && key.toLowerCase() === LP_TIME_COLUMN;

/** Why a key cannot be stored at all (whatever the table): the catalog refuses names over 255 characters. */
function refusal(key: string): { reason: string; message: string } | undefined {
  if (key.length > MAX_NAME_LENGTH)
    return {
      reason: "key_too_long",
      message: `key of ${key.length} characters exceeds ${MAX_NAME_LENGTH}; not stored`,
    };
  return undefined;
}

/** Columns the points need (first sight decides the type) and the keys refused, per line. */
export function planColumns(points: readonly LpPoint[], issues: LineIssue[]): ColumnWish[] {
  const wishes = new Map<string, ColumnWish>();
  const wish = (name: string, type: ColumnType) => {
    const l = name.toLowerCase();
    if (!wishes.has(l)) wishes.set(l, { name, type });
  };
  for (const p of points) {
    for (const [k] of p.tags) {
      if (isTimeColumn(k)) continue; // rule 6 at write time: a VARCHAR value for the TIMESTAMP column
      const r = refusal(k);
      if (r) issues.push({ line: p.line, key: k, ...r });
      else wish(k, "varchar");
    }
    for (const f of p.fields) {
      if (isTimeColumn(f.key)) continue;
      const r = refusal(f.key);
      if (r) issues.push({ line: p.line, key: f.key, ...r });
      else wish(f.key, fieldColumnType(f));
    }
  }
  return [...wishes.values()];
}

/** Column positions of a table layout by exact and by lower-case name (cached per layout object). */
interface Layout {
  types: ColumnType[];
  exact: Map<string, number>;
  folded: Map<string, number>;
}
const layouts = new WeakMap<TableDef, Layout>();

function layoutOf(def: TableDef): Layout {
  let l = layouts.get(def);
  if (!l) {
    const exact = new Map<string, number>();
    const folded = new Map<string, number>();
    def.columns.forEach((c, i) => {
      exact.set(c.name, i);
      if (!folded.has(c.name.toLowerCase())) folded.set(c.name.toLowerCase(), i);
    });
    l = { types: def.columns.map((c) => c.type), exact, folded };
    layouts.set(def, l);
  }
  return l;
}

const columnOf = (l: Layout, key: string) => l.exact.get(key) ?? l.folded.get(key.toLowerCase());

/** Whether a field value may go into a column of this type (rule 6: otherwise dropped). */
function fits(type: ColumnType, f: LpField): boolean {
  switch (type) {
    case "int64":
      return f.type === "integer" || (f.type === "unsigned" && (f.value as bigint) <= INT64_MAX);
    case "uint64":
      return f.type === "unsigned" || (f.type === "integer" && (f.value as bigint) >= 0n);
    case "int32":
      return (
        (f.type === "integer" || f.type === "unsigned") &&
        (f.value as bigint) >= -(2n ** 31n) &&
        (f.value as bigint) < 2n ** 31n
      );
    case "float64":
      return f.type === "float";
    case "boolean":
      return f.type === "boolean";
    case "varchar":
      return f.type === "string";
    default:
      return false;
  }
}

export interface WriteCounts {
  written: number;
  /** Tag or field values dropped because the column has another type (stage `type_mismatch`). */
  typeMismatch: number;
  /** Points that lost every field that way (not written: a point needs a field). */
  emptied: number;
  /** Points not written because the lake refused the row (full or stopping). */
  refused: number;
  /** Line numbers of points whose row would pass the spool's longest line (SPOOL_MAX_LINE_BYTES): not written. */
  tooLarge?: number[];
}

/** Epoch ns → µs, rounded down (the lake stores microseconds; sub-µs digits are cut). */
export function nsToUs(ns: bigint): number {
  const q = ns / 1000n;
  return Number(ns < 0n && q * 1000n !== ns ? q - 1n : q);
}

const SET_BY_TAG = 1;
const SET_BY_FIELD = 2;

/**
 * One row per point into `key` (the layout is read now and used for the whole call). Keys that
 * `planColumns` refused have no column here and are skipped; a key whose column has another type is
 * dropped and counted (rule 6), and that includes a tag or field named `time`: the TIMESTAMP column
 * (rule 3) holds the line's timestamp, never a tag or field value; a tag and a field naming the
 * same column: the tag wins.
 */
export function writePoints(
  row: (key: string) => RowWriter | undefined,
  def: TableDef,
  key: string,
  points: readonly LpPoint[],
  nowNs: bigint,
  counts: WriteCounts,
): void {
  const l = layoutOf(def);
  const n = l.types.length;
  const vals: unknown[] = new Array(n);
  const from = new Uint8Array(n);
  for (let pi = 0; pi < points.length; pi++) {
    const p = points[pi]!;
    from.fill(0);
    let fields = 0;
    for (const [k, v] of p.tags) {
      const i = columnOf(l, k);
      if (i === undefined) continue;
      if (i === 0 || from[i]) {
        counts.typeMismatch++;
        continue;
      }
      if (l.types[i] !== "varchar") {
        counts.typeMismatch++;
        continue;
      }
      vals[i] = v;
      from[i] = SET_BY_TAG;
    }
    for (const f of p.fields) {
      const i = columnOf(l, f.key);
      if (i === undefined) continue;
      if (i === 0 || from[i] === SET_BY_TAG || !fits(l.types[i]!, f)) {
        counts.typeMismatch++;
        continue;
      }
      // Duplicate field keys in one line: the last one wins.
      if (from[i] !== SET_BY_FIELD) fields++;
      vals[i] = f.value;
      from[i] = SET_BY_FIELD;
    }
    if (fields === 0) {
      counts.emptied++;
      continue;
    }
    const w = row(key);
    if (!w) {
      counts.refused += points.length - pi;
      return;
    }
    w.time(nsToUs(p.timeNs ?? nowNs));
    for (let i = 1; i < n; i++) {
      if (!from[i]) {
        w.str(null);
        continue;
      }
      const v = vals[i];
      switch (l.types[i]) {
        case "varchar":
          w.str(v as string);
          break;
        case "int64":
        case "uint64":
        case "int32":
          w.int(v as bigint);
          break;
        case "float64":
          w.float(v as number);
          break;
        case "boolean":
          w.bool(v as boolean);
          break;
        default:
          w.str(null);
      }
    }
    if (w.end() === false) (counts.tooLarge ??= []).push(p.line);
    else counts.written++;
  }
}
