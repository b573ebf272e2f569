/** Reading the lake writer's spool from a test (a killed appliance's sealed batches). */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";

/**
 * Call-IDs in the sealed spool batches above the committed watermark: exactly what a restart must
 * reload. A Parquet seal (<seq>.<columns>.<rows>.parquet, src/core/column-batch.ts) is read with
 * hyparquet, an independent reader; a CSV seal is CSV written by src/core/csv-batch.ts (every
 * string quoted with 0x01, NULL as \N) named <seq>.<csv columns>.<rows>.q1.csv; the writer puts the
 * row's uuid first, then timestamp, so session_id is the third field (index 2); the derived date
 * column is not written.
 */
const SESSION_FIELD = 2;

export async function spooledCallIds(spoolDir: string, watermark: number): Promise<string[]> {
  if (!existsSync(spoolDir)) return [];
  const ids: string[] = [];
  for (const name of readdirSync(spoolDir)) {
    const pq = /^(\d+)\.\d+\.\d+\.parquet$/.exec(name);
    if (pq) {
      if (Number(pq[1]) <= watermark) continue;
      const bytes = readFileSync(join(spoolDir, name));
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      const rows = await parquetReadObjects({
        file,
        columns: ["session_id"],
        compressors: { ZSTD: (input) => Bun.zstdDecompressSync(input) },
      });
      for (const r of rows) ids.push(String(r.session_id));
      continue;
    }
    const m = /^(\d+)\.\d+\.\d+(?:\.q1)?\.csv$/.exec(name);
    if (!m || Number(m[1]) <= watermark) continue;
    const text = readFileSync(join(spoolDir, name), "utf8");
    // `.q1` files quote with 0x01 (the current writer), older ones with `"`.
    const Q = name.includes(".q1.") ? "\u0001" : '"';
    let field = 0;
    let value = "";
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === Q && text[i + 1] === Q) {
          if (field === SESSION_FIELD) value += Q;
          i++;
        } else if (c === Q) quoted = false;
        else if (field === SESSION_FIELD) value += c;
      } else if (c === Q) quoted = true;
      else if (c === ",") field++;
      else if (c === "\n") {
        ids.push(value);
        field = 0;
        value = "";
      } else if (field === SESSION_FIELD) value += c;
    }
  }
  return ids;
}
