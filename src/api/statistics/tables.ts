import { t } from "elysia";
import type { TableDef } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { Gathered, OverNodes } from "../search/fan-out.ts";

/**
 * The tables `/statistics/databases`, `/statistics/measurements` and `/statistics/metrics` list:
 * this process's lake alone, or every node of coordinator.nodes merged (docs/ARCHITECTURE.md
 * "Reads over several nodes"). A table (schema and name, case-insensitive, as the catalog resolves
 * them) is listed once with the union of its columns (a column first seen keeps its type); its
 * committed rows and data files add over distinct lakes (of nodes sharing a lake only the one
 * that answers for the files counts), its oldest and newest time are the extremes of the nodes'.
 */
export interface TableStat {
  def: TableDef;
  rows: number;
  files: number;
  minTs: string | null;
  maxTs: string | null;
}

/** `POST /api/v1/statistics/tables` of a node (src/cluster/node-reads.ts). */
export const NodeStatisticsBody = t.Object({
  stats: t.Optional(
    t.Boolean({ description: "with each table's committed rows, files and time span (a catalog read)" }),
  ),
  buffer_only: t.Optional(
    t.Boolean({
      description: "another node of the same lake answers for the files: no committed figures from this one",
    }),
  ),
});

/** This lake's tables (buffer views and generations are internals and not listed), with their committed figures when asked. */
export async function lakeTableStats(
  lake: Pick<Lake, "tables" | "stats">,
  withStats: boolean,
  bufferOnly = false,
): Promise<TableStat[]> {
  const stats = withStats && !bufferOnly ? new Map((await lake.stats()).map((s) => [s.key, s])) : new Map();
  return lake.tables().map((def) => {
    const s = stats.get(`${def.schema}.${def.name}`);
    return { def, rows: s?.rows ?? 0, files: s?.files ?? 0, minTs: s?.minTs ?? null, maxTs: s?.maxTs ?? null };
  });
}

/** The catalog's times sort as text within one format; across formats by the instant they name. */
const earlier = (a: string, b: string) => {
  const x = Date.parse(a);
  const y = Date.parse(b);
  return Number.isFinite(x) && Number.isFinite(y) && x !== y ? x < y : a < b;
};

/** Merges the tables of several lakes (see the header); `answers` in the order of meta.nodes. */
export function mergeTableStats(
  answers: ReadonlyArray<{ bufferOnly: boolean; value: { tables: TableStat[] } }>,
): TableStat[] {
  const byKey = new Map<string, TableStat>();
  for (const a of answers) {
    for (const s of a.value.tables) {
      const k = `${s.def.schema}.${s.def.name}`.toLowerCase();
      const had = byKey.get(k);
      if (!had) {
        byKey.set(k, { ...s, def: { ...s.def, columns: [...s.def.columns] } });
        continue;
      }
      for (const c of s.def.columns)
        if (!had.def.columns.some((x) => x.name.toLowerCase() === c.name.toLowerCase())) had.def.columns.push(c);
      if (a.bufferOnly) continue;
      had.rows += s.rows;
      had.files += s.files;
      if (s.minTs !== null && (had.minTs === null || earlier(s.minTs, had.minTs))) had.minTs = s.minTs;
      if (s.maxTs !== null && (had.maxTs === null || earlier(had.maxTs, s.maxTs))) had.maxTs = s.maxTs;
    }
  }
  return [...byKey.values()];
}

/** The tables of this lake and every node, merged; `gathered` for meta.nodes. */
export async function tableStatsOverNodes(
  lake: Pick<Lake, "tables" | "stats"> | undefined,
  over: OverNodes,
  withStats: boolean,
): Promise<{ tables: TableStat[]; gathered: Gathered<{ tables: TableStat[] }> }> {
  const g = await over.gather<{ tables: TableStat[] }>({
    read: "statistics",
    path: "/api/v1/statistics/tables",
    body: (bufferOnly) => ({ stats: withStats, ...(bufferOnly ? { buffer_only: true } : {}) }),
    ...(lake ? { local: async () => ({ tables: await lakeTableStats(lake, withStats) }) } : {}),
    rows: (v) => v.tables.length,
  });
  return { tables: mergeTableStats(g.answers), gathered: g };
}
