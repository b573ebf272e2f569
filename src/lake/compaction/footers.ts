import { literal } from "../sql.ts";
import type { CompactionDb } from "./duck.ts";

/** Row-group sizes of a data file from its Parquet footer (uncompressed bytes). */
export interface RowGroupFacts {
  maxRowGroupBytes: number;
  uncompressedBytes: number;
}

const BATCH = 200;

/**
 * Footer facts per absolute path, read with `parquet_metadata` (footers only, no data pages) and
 * kept while the file is live: data files never change, so each footer is read once.
 */
export class FooterCache {
  private readonly facts = new Map<string, RowGroupFacts>();

  constructor(private readonly db: CompactionDb) {}

  /** Facts of `paths`, reading the footers not read before. */
  async get(paths: readonly string[]): Promise<Map<string, RowGroupFacts>> {
    const missing = paths.filter((p) => !this.facts.has(p));
    for (let i = 0; i < missing.length; i += BATCH) {
      const part = missing.slice(i, i + BATCH);
      const rows = await this.db.read(
        `SELECT file_name, row_group_id, sum(total_uncompressed_size) AS bytes FROM parquet_metadata([${part.map(literal).join(", ")}]) GROUP BY file_name, row_group_id`,
      );
      for (const p of part) this.facts.set(p, { maxRowGroupBytes: 0, uncompressedBytes: 0 });
      for (const r of rows) {
        const f = this.facts.get(String(r.file_name));
        if (!f) continue;
        const bytes = Number(r.bytes);
        f.uncompressedBytes += bytes;
        f.maxRowGroupBytes = Math.max(f.maxRowGroupBytes, bytes);
      }
    }
    return new Map(paths.map((p) => [p, this.facts.get(p)!]));
  }

  /** Forgets every path not in `live` (files merged away or retired). */
  retain(live: ReadonlySet<string>): void {
    for (const p of this.facts.keys()) if (!live.has(p)) this.facts.delete(p);
  }
}
