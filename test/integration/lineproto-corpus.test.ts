/**
 * The reference line-protocol cases (shared corpus, generated with the InfluxDB strict decoder) sent
 * through the real HTTP receiver into the lake, then read back with SQL: status, tables, columns,
 * typed values and times must be what the reference decoded. Each case writes into its own schema.
 * Our documented deviations from `seed_status` are asserted as such:
 * - a body with bad lines: the good lines are written and the 400 lists the bad ones.
 * An unsigned value above 2^63-1 seen first makes a UBIGINT (`uint64`) column (docs/ARCHITECTURE.md
 * "Line-protocol types"), so that case is 204 with the exact value, as the reference decodes it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { sanitizeIdentifier } from "../../src/ingest/lineproto/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { corpusPath } from "../corpus.ts";
import { tempDir } from "../harness.ts";

const CORPUS = corpusPath("lineproto", "cases.json");
const INT64_MAX = 2n ** 63n - 1n;

type CaseField = { key: string; type: "int" | "uint" | "float" | "bool" | "string"; value: string | number | boolean };
type CasePoint = { measurement: string; tags: Record<string, string>; fields: CaseField[]; time_ns: string | null };
type Case = {
  id: string;
  text?: string;
  text_b64?: string;
  precision: "ns" | "us" | "ms" | "s";
  expect: "ok" | "error";
  error?: string;
  points?: CasePoint[];
  seed_status: number;
};
type Body = { error: string; written: number; lines?: Array<{ line: number; key?: string; reason: string }> };

const SQL_TYPE: Record<CaseField["type"], string> = {
  int: "int",
  uint: "int",
  float: "float",
  bool: "bool",
  string: "string",
};
const PRECISION_NS = { ns: 1n, us: 1_000n, ms: 1_000_000n, s: 1_000_000_000n };
const floorUs = (ns: bigint) => (ns >= 0n || ns % 1000n === 0n ? ns / 1000n : ns / 1000n - 1n);

/** Rule 5 with the first value deciding: unsigned beyond BIGINT makes an unsigned column. */
const columnKind = (f: CaseField) =>
  f.type === "uint" && BigInt(f.value as string) > INT64_MAX ? "uint" : SQL_TYPE[f.type];

/** Rule 6: whether a value fits a column of this kind. */
function fits(kind: string | undefined, f: CaseField): boolean {
  if (kind === "int") return f.type === "int" || (f.type === "uint" && BigInt(f.value as string) <= INT64_MAX);
  if (kind === "uint") return f.type === "uint" || (f.type === "int" && BigInt(f.value as string) >= 0n);
  return kind === SQL_TYPE[f.type];
}

/** Expected rows per table, simulating rules 4-6 (first type wins, per-case-insensitive column). */
function expectedTables(points: CasePoint[]) {
  const tables = new Map<
    string,
    { types: Map<string, string>; rows: Array<{ time: bigint | null; values: Map<string, unknown> }> }
  >();
  for (const p of points) {
    const name = sanitizeIdentifier(p.measurement);
    let t = tables.get(name.toLowerCase());
    if (!t) tables.set(name.toLowerCase(), (t = { types: new Map(), rows: [] }));
    for (const k of Object.keys(p.tags)) if (!t.types.has(k.toLowerCase())) t.types.set(k.toLowerCase(), "string");
    for (const f of p.fields) {
      if (!t.types.has(f.key.toLowerCase())) t.types.set(f.key.toLowerCase(), columnKind(f));
    }
    const values = new Map<string, unknown>();
    const byTag = new Set<string>();
    for (const [k, v] of Object.entries(p.tags)) {
      const l = k.toLowerCase();
      if (values.has(l) || t.types.get(l) !== "string") continue;
      values.set(l, v);
      byTag.add(l);
    }
    let fields = 0;
    for (const f of p.fields) {
      const l = f.key.toLowerCase();
      if (byTag.has(l) || !fits(t.types.get(l), f)) continue;
      values.set(l, f.type === "int" || f.type === "uint" ? String(f.value) : f.value);
      fields++;
    }
    if (fields > 0) t.rows.push({ time: p.time_ns === null ? null : BigInt(p.time_ns), values });
  }
  return { tables };
}

const corpusCases = (): Case[] =>
  existsSync(CORPUS) ? (JSON.parse(readFileSync(CORPUS, "utf8")) as { cases: Case[] }).cases : [];

describe("line-protocol reference corpus through the receiver", () => {
  const cases = corpusCases();
  if (cases.length === 0) {
    console.warn(`skip: line-protocol corpus not found at ${CORPUS}`);
    test.skip("corpus cases", () => {});
    return;
  }

  test(`${cases.length} reference cases: status, tables, typed values and times`, async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { line_protocol: { enable: true } } });
    const lake = a.app.lake!;
    const base = a.app.lineProtocol!.url();
    const failures: string[] = [];
    for (const c of cases) {
      const schema = `c_${c.id.replace(/[^A-Za-z0-9]/g, "_")}`;
      const body = c.text_b64 !== undefined ? Buffer.from(c.text_b64, "base64") : c.text!;
      const beforeNs = BigInt(Date.now()) * 1_000_000n;
      const res = await fetch(`${base}/write?db=${schema}&precision=${c.precision}`, { method: "POST", body });
      const afterNs = BigInt(Date.now() + 1) * 1_000_000n;
      const json = res.status === 204 ? undefined : ((await res.json()) as Body);
      const fail = (what: string) =>
        failures.push(
          `${c.id} ${JSON.stringify(c.text ?? c.text_b64)}: ${what} (status ${res.status} ${JSON.stringify(json)})`,
        );

      if (c.expect === "error") {
        const refLine = Number(/at line (\d+):/.exec(c.error ?? "")?.[1] ?? 1);
        if (res.status !== 400) fail("expected 400");
        else if (!json?.lines?.some((l) => l.line === refLine))
          fail(`expected line ${refLine} among the reported lines`);
        continue;
      }
      const { tables } = expectedTables(c.points!);
      const wantStatus = c.points!.length === 0 ? 400 : c.seed_status;
      if (res.status !== wantStatus) {
        fail(`expected ${wantStatus}`);
        continue;
      }
      await lake.sync();
      for (const [lowerName, t] of tables) {
        const def = lake.tables().find((d) => d.schema === schema && d.name.toLowerCase() === lowerName);
        if (!def) {
          if (t.rows.length > 0) fail(`table ${lowerName} missing`);
          continue;
        }
        if (def.columns[0]?.name !== "time" || def.columns[0]?.type !== "timestamp")
          fail("time must be the first column, TIMESTAMP");
        for (const col of def.columns.slice(1)) {
          const want = { string: "varchar", int: "int64", uint: "uint64", float: "float64", bool: "boolean" }[
            t.types.get(col.name.toLowerCase()) ?? ""
          ];
          if (col.type !== want) fail(`column ${col.name} is ${col.type}, expected ${want}`);
        }
        const r = await lake.query(
          `SELECT epoch_us("time") AS __us, * EXCLUDE ("time") FROM svc_lake."${def.schema}"."${def.name}"`,
        );
        const actual = r.rows.map((row) => {
          const values = new Map<string, unknown>();
          for (const col of def.columns.slice(1)) {
            const v = row[col.name];
            if (v !== null && v !== undefined)
              values.set(col.name.toLowerCase(), col.type === "int64" || col.type === "uint64" ? String(v) : v);
          }
          return { us: BigInt(row.__us as number | string), values };
        });
        const norm = (rows: Array<{ values: Map<string, unknown> }>) =>
          rows.map((x) => JSON.stringify([...x.values].sort(([k1], [k2]) => (k1 < k2 ? -1 : 1)))).sort();
        if (JSON.stringify(norm(actual)) !== JSON.stringify(norm(t.rows)))
          fail(`rows of ${def.name}: got ${JSON.stringify(norm(actual))}, want ${JSON.stringify(norm(t.rows))}`);
        const times = actual.map((x) => x.us).sort();
        const wantTimes = t.rows.map((x) => x.time);
        for (const w of wantTimes) {
          if (w !== null) {
            if (!times.includes(floorUs(w))) fail(`time ${w} ns (→ ${floorUs(w)} µs) not stored`);
          } else {
            const f = PRECISION_NS[c.precision];
            const lo = floorUs(beforeNs - (beforeNs % f) - f);
            if (!times.some((us) => us >= lo && us <= floorUs(afterNs)))
              fail("a point without timestamp must get the receive time");
          }
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
