/**
 * Structured HEP table mode (docs/LINE-PROTOCOL.md "Structured HEP table mode", `allow_hep_sip_call`): a write
 * whose lines all name one HEP table is stored in `main.<table>` with that table's fixed layout
 * (src/ingest/hep/tables.ts), as if a HEP agent had sent it.
 *
 * Rules as implemented (numbers of the spec):
 * 1. all points of the request name the same table, one of the seeded HEP tables; anything else is
 *    a 400 for the whole request, nothing written;
 * 2. `db`/`bucket` are ignored: rows land in `main`;
 * 3. tags and fields are merged (a field wins over a tag of the same name); text columns take
 *    quoted strings or tags, integer columns take `5060i`/`5060u` or a tag of decimal digits;
 *    `protocol` is an integer field as the spec says (`17i`, the IP protocol number of HEP chunk
 *    0x0002), stored as the text HEP ingest stores for it (`UDP`, `TCP`, `SCTP`, else the number);
 *    a quoted name (`"TLS"`) is kept as it is;
 *    `proto_type` defaults to the N of `hep_proto_N_*`; a key that is not a column, or `uuid` (the
 *    lake generates it), refuses the line;
 * 4. time: the line timestamp, else a `timestamp` tag or field (RFC 3339, `YYYY-MM-DD HH:MM:SS[.f]`
 *    in UTC, or an epoch integer in the request precision), else the receive time;
 * 5. `date`: optional; the lake derives the partition column from the timestamp, so a given `date`
 *    must be `YYYY-MM-DD` and equal the UTC day of the timestamp, else the line is refused;
 * 6. `data_extra`: a JSON object in a string, default `{}`; anything else refuses the line;
 * 7 and 8 are checked by the caller (ingest.ts) and the receiver.
 * A refused line is listed in the 400 body; the other lines are written (our multi-line rule).
 */
import { type RowWriter, type TableDef, writtenColumns, errorMessage, SPOOL_MAX_LINE_BYTES } from "../../core/index.ts";
import { ipProtocolName } from "../hep/rows.ts";
import { seededHepTables } from "../hep/tables.ts";
import { PRECISION_NS, type LpField, type LpPoint, type LpPrecision } from "./parse.ts";
import { nsToUs, type LineIssue } from "./rows.ts";
import type { LpSink } from "./tables.ts";

const HEP_PREFIX = "hep_proto_";
const KNOWN = new Map(seededHepTables().map((d) => [d.name, d]));

export type HepTableRequest = { kind: "none" } | { kind: "reject"; message: string } | { kind: "hep"; table: TableDef };

/** Rule 1: whether this request is a structured HEP write, and into which table. */
export function hepTableRequest(points: readonly LpPoint[]): HepTableRequest {
  if (!points.some((p) => p.measurement.toLowerCase().startsWith(HEP_PREFIX))) return { kind: "none" };
  const names = [...new Set(points.map((p) => p.measurement))];
  if (names.length > 1) {
    const shown = names
      .slice(0, 5)
      .map((n) => JSON.stringify(n))
      .join(", ");
    return {
      kind: "reject",
      message: `structured HEP table mode: all lines of a request must use the same hep_proto_* measurement; found ${shown}${names.length > 5 ? ", …" : ""}`,
    };
  }
  const name = names[0]!;
  const def = KNOWN.get(name);
  if (!def) return { kind: "reject", message: `unknown HEP table "${name}"; known: ${[...KNOWN.keys()].join(", ")}` };
  return { kind: "hep", table: def };
}

type Value = { tag: string } | { field: LpField };

const INT32 = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n] as const;

const text = (v: Value): string | undefined =>
  "tag" in v ? v.tag : v.field.type === "string" ? (v.field.value as string) : undefined;

function integer(v: Value): bigint | undefined {
  if ("field" in v) {
    const f = v.field;
    if (f.type === "integer" || f.type === "unsigned") return f.value as bigint;
    return f.type === "string" && /^-?\d{1,20}$/.test(f.value as string) ? BigInt(f.value as string) : undefined;
  }
  return /^-?\d{1,20}$/.test(v.tag) ? BigInt(v.tag) : undefined;
}

/**
 * Rule 3 for `protocol`: an integer field, or a tag of digits, is an IP protocol number (0-255);
 * undefined for text (a quoted string or another tag), "bad" for anything else.
 */
function protocolNumber(v: Value): number | undefined | "bad" {
  let n: bigint | undefined;
  if ("tag" in v) {
    if (!/^\d+$/.test(v.tag)) return undefined;
    n = v.tag.length <= 3 ? BigInt(v.tag) : 256n;
  } else if (v.field.type === "integer" || v.field.type === "unsigned") n = v.field.value as bigint;
  else return v.field.type === "string" ? undefined : "bad";
  return n >= 0n && n <= 255n ? Number(n) : "bad";
}

const STAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:?\d{2})?$/;

/** Rule 4: a `timestamp` value → epoch ns, or a message. */
function timestampNs(v: Value, precision: LpPrecision): bigint | string {
  const n = integer(v);
  if (n !== undefined) return n * PRECISION_NS[precision];
  const s = text(v);
  const m = s === undefined ? null : STAMP.exec(s.trim());
  if (!m)
    return `timestamp "${s ?? String("field" in v ? v.field.value : "")}" is not RFC 3339, "YYYY-MM-DD HH:MM:SS" or an epoch integer`;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const check = new Date(ms);
  if (Number.isNaN(ms) || check.getUTCDate() !== Number(m[3]) || check.getUTCHours() !== Number(m[4]))
    return `timestamp "${s}" is not a valid date and time`;
  let offsetMin = 0;
  const zone = m[8];
  if (zone && zone !== "Z" && zone !== "z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    offsetMin = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  const fracNs = BigInt((m[7] ?? "").padEnd(9, "0") || "0");
  return (BigInt(ms) - BigInt(offsetMin) * 60_000n) * 1_000_000n + fracNs;
}

function utcDay(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString().slice(0, 10);
}

/** One point → the column values of `def` (written columns, in order), or why the line is refused. */
function mapPoint(
  def: TableDef,
  p: LpPoint,
  precision: LpPrecision,
  nowNs: bigint,
): { values: unknown[] } | { issue: Omit<LineIssue, "line"> } {
  const merged = new Map<string, Value>();
  for (const [k, v] of p.tags) merged.set(k, { tag: v });
  for (const f of p.fields) merged.set(f.key, { field: f });
  const refuse = (key: string | undefined, reason: string, message: string) => ({
    issue: { ...(key ? { key } : {}), reason, message },
  });

  let ns = p.timeNs;
  const ts = merged.get("timestamp");
  if (ns === null && ts) {
    const r = timestampNs(ts, precision);
    if (typeof r === "string") return refuse("timestamp", "bad_timestamp", r);
    ns = r;
  }
  const us = nsToUs(ns ?? nowNs);
  const date = merged.get("date");
  if (date) {
    const d = text(date);
    if (d === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(d))
      return refuse("date", "bad_date", `date must be a YYYY-MM-DD string`);
    if (d !== utcDay(us))
      return refuse(
        "date",
        "bad_date",
        `date ${d} is not the UTC day of the timestamp (${utcDay(us)}); the lake partitions by that day`,
      );
  }
  if (merged.has("uuid"))
    return refuse("uuid", "generated_column", "uuid is generated by the lake for every row; remove it");
  const protoDefault = BigInt(/^hep_proto_(\d+)_/.exec(def.name)?.[1] ?? "0");
  const values: unknown[] = [];
  const columns = writtenColumns(def);
  const known = new Set(columns.map((c) => c.name));
  for (const k of merged.keys()) {
    if (!known.has(k) && k !== "date") return refuse(k, "unknown_column", `"${k}" is not a column of ${def.name}`);
  }
  for (const c of columns) {
    if (c.name === "timestamp") {
      values.push(us);
      continue;
    }
    const v = merged.get(c.name);
    if (c.name === "data_extra") {
      const s = v === undefined ? "{}" : text(v);
      let obj: unknown;
      try {
        obj = s === undefined ? undefined : JSON.parse(s);
      } catch {
        obj = undefined;
      }
      if (typeof obj !== "object" || obj === null || Array.isArray(obj))
        return refuse("data_extra", "bad_data_extra", "data_extra must be a JSON object in a quoted string");
      values.push(s);
      continue;
    }
    if (v === undefined) {
      values.push(c.name === "proto_type" ? protoDefault : null);
      continue;
    }
    if (c.name === "protocol") {
      const n = protocolNumber(v);
      if (n === "bad")
        return refuse(
          c.name,
          "type_mismatch",
          `protocol takes an IP protocol number between 0 and 255 (e.g. 17i) or a quoted name (e.g. "TLS")`,
        );
      if (n !== undefined) {
        values.push(ipProtocolName(n));
        continue;
      }
    }
    if (c.type === "varchar") {
      const s = text(v);
      if (s === undefined) return refuse(c.name, "type_mismatch", `${c.name} takes a quoted string`);
      values.push(s);
      continue;
    }
    const n = integer(v);
    const [lo, hi] = c.type === "int32" ? INT32 : INT64;
    if (n === undefined || n < lo || n > hi)
      return refuse(c.name, "type_mismatch", `${c.name} takes an integer (e.g. 5060i) between ${lo} and ${hi}`);
    values.push(n);
  }
  return { values };
}

/** false: the row passed the spool's longest line and was not kept (RowWriter.end). */
function writeRow(w: RowWriter, def: TableDef, values: readonly unknown[]): boolean {
  writtenColumns(def).forEach((c, i) => {
    const v = values[i];
    if (c.type === "timestamp") w.time(v as number);
    else if (c.type === "varchar") w.str(v as string | null);
    else w.int(v as bigint | null);
  });
  return w.end() !== false;
}

export interface HepWriteResult {
  written: number;
  failure?: { stage: "ddl" | "insert"; points: number; message: string };
}

/** Writes the points into the HEP table `def` (rules 2-6); refused lines are added to `lines`. */
export async function writeHepTable(
  sink: LpSink,
  def: TableDef,
  points: readonly LpPoint[],
  opts: { precision: LpPrecision; nowNs: bigint },
  lines: LineIssue[],
): Promise<HepWriteResult> {
  const key = `${def.schema}.${def.name}`;
  try {
    // Idempotent: the HEP pipeline defines the seeded tables at start; without HEP ingest we do.
    await sink.defineTable(def);
  } catch (e) {
    return {
      written: 0,
      failure: {
        stage: "ddl",
        points: points.length,
        message: `table ${key} could not be created: ${errorMessage(e)}`,
      },
    };
  }
  const layout = sink.table(key) ?? def;
  let written = 0;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const m = mapPoint(layout, p, opts.precision, opts.nowNs);
    if ("issue" in m) {
      lines.push({ line: p.line, ...m.issue });
      continue;
    }
    const w = sink.row(key);
    if (!w) {
      const left = points.length - i;
      return {
        written,
        failure: {
          stage: "insert",
          points: left,
          message: `the lake refused ${left} point(s) (write buffer full or shutting down); ${written} written`,
        },
      };
    }
    if (writeRow(w, layout, m.values)) written++;
    else
      lines.push({
        line: p.line,
        reason: "point_too_large",
        message: `the point's values take more than ${SPOOL_MAX_LINE_BYTES} bytes in the lake's write buffer; split it into smaller points`,
      });
  }
  return { written };
}
