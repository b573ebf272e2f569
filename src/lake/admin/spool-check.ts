/**
 * Where the writer's spool stands against the Parquet files, for the catalog rebuild. The catalog
 * keeps the writer's spool watermark (svc_writer_watermark, docs/DUCKLAKE.md): spool files at or
 * below it are in Parquet and deleted at start, files above it are loaded again and flushed. A
 * rebuilt catalog takes the old catalog's watermark when that is readable; for tables whose rows
 * carry a `uuid` (the HEP tables: a UUIDv7 per row, the first spool column) each spool file above
 * it is also looked up in the registered files, so rows already in Parquet (flushed shortly before
 * a crash, or written by a flush that crashed before its commit) are not loaded a second time.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { TableDef } from "../../core/index.ts";
import { ident, literal } from "../sql.ts";
import { spoolSelect } from "../writer/spool-sql.ts";
import type { ContentChecker, ScannedFile } from "./superseded.ts";

export interface SpoolState {
  /** Watermark to store for the table; null: none known. */
  watermark: number | null;
  /** Spool files above the watermark (loaded again at start). */
  pending: number;
  /** What an operator should know, or undefined when nothing is left over. */
  note?: string;
}

interface SpoolFile {
  name: string;
  seq: number;
  columns: number;
  rows: number;
  legacyQuote: boolean;
  parquet: boolean;
}

/** Spool files of a table (names `<seq>.<csv columns>.<rows>[.q1].csv` or `<seq>.<columns>.<rows>.parquet`, written by the lake writer). */
function spoolFiles(dir: string): SpoolFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => /^(\d+)\.(\d+)\.(\d+)(?:(\.q1)?\.csv|\.(parquet))$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      name: m[0],
      seq: Number(m[1]),
      columns: Number(m[2]),
      rows: Number(m[3]),
      legacyQuote: m[4] === undefined && m[5] === undefined,
      parquet: m[5] !== undefined,
    }))
    .sort((a, b) => a.seq - b.seq);
}

/** SELECT of the row's uuid (`uuid`) of one spool file: the first CSV column, or the named Parquet column. */
function uuidSelect(file: string, f: SpoolFile, uuidColumn: string): string {
  if (f.parquet) return `SELECT ${ident(uuidColumn)} AS uuid FROM read_parquet(${literal(file)})`;
  const uuid = { name: "uuid", type: "varchar" as const, derived: "uuid" as const };
  const rest = Array.from({ length: Math.max(0, f.columns - 1) }, (_, i) => ({
    name: `c${i + 1}`,
    type: "varchar" as const,
  }));
  const layout: TableDef = { schema: "s", name: "t", columns: [uuid, ...rest], timeColumn: "uuid", sortBy: [] };
  const only: TableDef = { ...layout, columns: [uuid] };
  return spoolSelect(only, [{ file, def: layout, ...(f.legacyQuote ? { legacyQuote: true } : {}) }])[0]!;
}

export async function spoolState(
  dir: string,
  oldWatermark: number | null,
  uuidColumn: string | undefined,
  live: ScannedFile[],
  checker: () => Promise<ContentChecker>,
): Promise<SpoolState> {
  const above = spoolFiles(dir).filter((f) => f.seq > (oldWatermark ?? 0));
  if (above.length === 0) return { watermark: oldWatermark, pending: 0 };
  const rows = above.reduce((n, f) => n + f.rows, 0);
  if (uuidColumn === undefined) {
    const why =
      oldWatermark === null
        ? "the old catalog's watermark is unknown and the rows have no uuid to look up"
        : "above the old catalog's watermark";
    return {
      watermark: oldWatermark,
      pending: above.length,
      note: `${above.length} spool file(s), ${rows} rows, are loaded again at start (${why}); rows flushed just before a crash may then appear twice`,
    };
  }
  let watermark = oldWatermark;
  let partial = 0;
  let stopped = false;
  for (const f of above) {
    const c = await checker();
    const sel = uuidSelect(join(dir, f.name), f, uuidColumn);
    const span = (
      await (async () => {
        try {
          return await c.rows(`SELECT count(*) AS n, min(uuid) AS lo, max(uuid) AS hi FROM (${sel})`);
        } catch {
          return [];
        }
      })()
    )[0];
    if (!span || Number(span.n) === 0) {
      stopped = true;
      continue;
    }
    const lo = String(span.lo);
    const hi = String(span.hi);
    const candidates = live.filter((s) => {
      const st = s.facts.columnStats[uuidColumn];
      return st !== undefined && st.min !== null && st.max !== null && st.min <= hi && st.max >= lo;
    });
    const found =
      candidates.length === 0
        ? 0
        : await c.count(
            `SELECT count(*) AS n FROM (${sel}) s SEMI JOIN read_parquet([${candidates.map((s) => literal(s.file.abs)).join(", ")}]) p ON p.${ident(uuidColumn)} = s.uuid`,
          );
    if (found === Number(span.n) && !stopped) watermark = f.seq;
    else {
      stopped = true;
      if (found > 0) partial++;
    }
  }
  const pending = above.filter((f) => f.seq > (watermark ?? 0));
  if (pending.length === 0) return { watermark, pending: 0 };
  const pendingRows = pending.reduce((n, f) => n + f.rows, 0);
  const part = partial > 0 ? `; ${partial} of them already in Parquet in part or whole (those rows appear twice)` : "";
  return {
    watermark,
    pending: pending.length,
    note: `${pending.length} spool file(s), ${pendingRows} rows not in Parquet, are loaded again at start${part}`,
  };
}
