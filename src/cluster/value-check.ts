/**
 * The node check's value body `{field, values[]}` (docs/ARCHITECTURE.md "Node check by values"):
 * the legacy file store answered it from bloom filters (false positives 0.01); svc answers it
 * exactly from the lake, buffer included, so a coordinator may skip a node that holds none of the
 * values without ever missing one that does. One semi-join per column over the HEP tables
 * that have it, pruned to `[min_ts, max_ts]` when given.
 */
import { t } from "elysia";
import { AppError, type TableDef } from "../core/index.ts";
import { type Lake, literal } from "../lake/index.ts";

/** Field names a client may send → the HEP table columns that hold them. */
const FIELDS: Record<string, readonly string[]> = {
  call_id: ["session_id"],
  sid: ["session_id"],
  session_id: ["session_id"],
  user: ["caller", "callee"],
  from_user: ["caller"],
  to_user: ["callee"],
  caller: ["caller"],
  callee: ["callee"],
  ip: ["src_ip", "dst_ip"],
  src_ip: ["src_ip"],
  dst_ip: ["dst_ip"],
  cid: ["cid"],
  correlation_id: ["cid"],
};

/** Values one request may carry: 100 000 Call-IDs are about 4 MB of JSON. */
export const MAX_CHECK_VALUES = 200_000;
/** Value sets up to this size prune files by their bloom filters before the scan. */
const MAX_PRUNED_VALUES = 100;
/** The separator the values travel joined by (one bound parameter instead of one per value). */
const SEP = "\u0001";

export const ValueCheckBody = t.Object({
  field: t.String({ minLength: 1, maxLength: 64, description: `one of: ${Object.keys(FIELDS).join(", ")}` }),
  values: t.Array(t.String({ maxLength: 1024 }), { maxItems: MAX_CHECK_VALUES }),
  min_ts: t.Optional(t.Number({ description: "nanoseconds since epoch: only data from then on" })),
  max_ts: t.Optional(t.Number({ description: "nanoseconds since epoch: only data up to then" })),
});

export interface ValueCheck {
  field: string;
  values: string[];
  min_ts?: number | undefined;
  max_ts?: number | undefined;
}

/** Which of `values` this node's lake holds in `field` (exact: no false positive, no false negative). */
export async function checkValues(
  lake: Lake,
  body: ValueCheck,
): Promise<{
  field: string;
  has_data: boolean;
  checked: number;
  present: string[];
  exact: true;
  false_positive_rate: 0;
}> {
  const columns = FIELDS[body.field.toLowerCase()];
  if (!columns)
    throw new AppError("VALIDATION", `field: "${body.field}" is not one of ${Object.keys(FIELDS).join(", ")}`, {
      details: { fields: ["field"] },
    });
  if (body.values.some((v) => v.includes(SEP)))
    throw new AppError("VALIDATION", "values: a value contains the control character U+0001", {
      details: { fields: ["values"] },
    });
  if (body.min_ts !== undefined && body.max_ts !== undefined && body.max_ts < body.min_ts) {
    throw new AppError("VALIDATION", "max_ts must not be before min_ts", { details: { fields: ["max_ts"] } });
  }
  const wanted = [...new Set(body.values)];
  if (wanted.length === 0)
    return { field: body.field, has_data: false, checked: 0, present: [], exact: true, false_positive_rate: 0 };
  const range = {
    ...(body.min_ts !== undefined ? { fromUs: Math.floor(body.min_ts / 1000) } : {}),
    ...(body.max_ts !== undefined ? { toUs: Math.ceil(body.max_ts / 1000) } : {}),
  };
  // A few values: files whose bloom filters and min/max rule out every value are not read
  // (src/lake/bloom-index.ts), and the values go as a literal list, which DuckDB pushes into the
  // Parquet scan; a join with the `wanted` list reads the whole column, cheaper for many values.
  const pruned = wanted.length <= MAX_PRUNED_VALUES;
  const match = pruned ? `IN (${wanted.map(literal).join(", ")})` : "IN (SELECT w FROM wanted)";
  const tables = lake
    .tables()
    .filter(isHepTable)
    .map((def) => ({ def, have: columns.filter((c) => def.columns.some((col) => col.name === c)) }))
    .filter((t) => t.have.length > 0);
  const scans = await Promise.all(
    tables.map(({ def, have }) =>
      lake.scanSql(`${def.schema}.${def.name}`, {
        ...range,
        ...(pruned ? { lookups: [{ columns: have, values: wanted }] } : {}),
      }),
    ),
  );
  const parts = tables.flatMap(({ have }, i) =>
    have.map((c) => `SELECT "${c}" AS v FROM (${scans[i]}) t WHERE "${c}" ${match}`),
  );
  if (parts.length === 0)
    return {
      field: body.field,
      has_data: false,
      checked: wanted.length,
      present: [],
      exact: true,
      false_positive_rate: 0,
    };
  const sql = `WITH wanted AS (SELECT DISTINCT unnest(string_split($1, chr(1))) AS w) SELECT DISTINCT v FROM (${parts.join(" UNION ALL ")}) WHERE v IS NOT NULL`;
  const r = await lake.query(sql, [wanted.join(SEP)]);
  const present = r.rows.map((row) => String(row.v));
  return {
    field: body.field,
    has_data: present.length > 0,
    checked: wanted.length,
    present,
    exact: true,
    false_positive_rate: 0,
  };
}

/** HEP tables (`main.hep_proto_*`): the ones that carry SIP and packet addresses. */
const isHepTable = (def: TableDef) => def.schema === "main" && def.name.startsWith("hep_proto_");
