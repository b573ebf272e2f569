/**
 * Search benchmark data (docs/BENCHMARKS.md "Search over 7 days / 100 M rows"): a week of SIP written straight into a lake, file by file,
 * with the writer's own pieces — `writeDataFile` (COPY … ORDER BY session_id, timestamp TO Parquet,
 * zstd, 16 k-row groups, field ids = DuckLake column ids, stats read back) and one catalog commit
 * per file — instead of 100 M packets through HEP (≈ 40 k msgs/s on this machine: 45 min).
 *
 *   bun bench/search/generate.ts --rows 100000000 --dir /work/bench-data/search
 *
 * --rows        rows of hep_proto_1_call (the searched table); registration and default come on top
 *               (--reg-share 0.4, --default-share 0.04 of that)
 * --days 7      span, ending --end (ISO time, default now)
 * --file-rows   rows per compacted file (default 800 000 ≈ 60 MiB: the compactor merges up to its 64 MiB max_file_size_bytes)
 * --small-minutes 6  the newest minutes stay as 30-second flush files (younger than min_age_sec + one
 *               check interval, so not compacted yet), as in a running appliance
 * --rows-per-page 512  compacted files cut into pages of that many rows (narrow columns: 8 KiB) with an offset index and
 *               bloom filters, as compaction writes them (docs/STORAGE.md "Paged data files"); 0: DuckDB's
 *               one page per chunk. The newest 30-second files keep DuckDB's layout either way.
 * --check       parse sampled payloads with src/sip and compare them with the row's columns
 * Layout and catalog are the appliance's: <dir>/catalog.sqlite, <dir>/lake/, <dir>/manifest.json.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import { Engine } from "../../src/lake/engine.ts";
import { writeDataFile } from "../../src/lake/writer/data-file.ts";
import { LOOKUP_COLUMNS } from "../../src/lake/bloom-index.ts";
import { hepTableDef, type SipTableKind } from "../../src/ingest/hep/tables.ts";
import { parseSip } from "../../src/sip/index.ts";
import type { TableDef } from "../../src/core/index.ts";
import type { TableInfo } from "../../src/lake/catalog-port.ts";
import {
  CALL_ID_SQL,
  MAX_SPAN_US,
  ROWS_PER_CALL,
  ROWS_PER_KEEPALIVE,
  ROWS_PER_REGISTRATION,
  callFields,
  callSource,
  defaultSource,
  registrationSource,
  type Slice,
  type Timeline,
} from "./dataset.ts";
import { flags, lakePaths, loadAverage, type Manifest, type SampleCall, type TableSummary } from "./manifest.ts";

const DAY_US = 86_400_000_000;
const SMALL_FILE_US = 30_000_000;

const f = flags(process.argv.slice(2));
const dir = f.get("dir");
if (!dir) throw new Error("--dir is required");
const callRows = Number(f.get("rows") ?? 1_000_000);
const days = Number(f.get("days") ?? 7);
const fileRows = Number(f.get("file-rows") ?? 800_000);
const smallMinutes = Number(f.get("small-minutes") ?? 6);
const regShare = Number(f.get("reg-share") ?? 0.4);
const defaultShare = Number(f.get("default-share") ?? 0.04);
const endMs = f.has("end") ? Date.parse(f.get("end")!) : Math.floor(Date.now() / 1000) * 1000;
const check = f.get("check") === "true";
const rowsPerPage = Number(f.get("rows-per-page") ?? 512);
const paths = lakePaths(dir);

if (existsSync(paths.catalog)) {
  if (f.get("force") !== "true") throw new Error(`${paths.catalog} exists: pass --force to replace the data set`);
  for (const p of [
    paths.catalog,
    `${paths.catalog}-wal`,
    `${paths.catalog}-shm`,
    paths.data,
    paths.tmp,
    paths.manifest,
    `${dir}/spool`,
    `${dir}/settings.db`,
  ])
    rmSync(p, { recursive: true, force: true });
}
mkdirSync(paths.data, { recursive: true });

const endUs = endMs * 1000;
const startUs = endUs - days * DAY_US;

interface Plan {
  kind: SipTableKind;
  def: TableDef;
  info: TableInfo;
  timeline: Timeline;
  units: number;
  rowsPerUnit: number;
  source: (t: Timeline, s: Slice) => string;
}

const catalog = openLakeCatalog({ path: paths.catalog, dataPath: paths.data });
const engine = await Engine.open({
  threads: Number(f.get("threads") ?? 2),
  memoryLimit: f.get("memory") ?? "8GB",
  tempDirectory: paths.tmp,
  allowedDirectories: [paths.data, paths.tmp],
});

/** Same arguments as Lake.defineTable, so the appliance finds the tables it would have created. */
async function plan(kind: SipTableKind, rows: number, rowsPerUnit: number, source: Plan["source"]): Promise<Plan> {
  const def = hepTableDef(1, kind);
  const info = await catalog.ensureTable(def.schema, {
    name: def.name,
    columns: def.columns.map((c) => ({ name: c.name, type: c.type })),
    ...(def.partitionBy ? { partitionBy: def.partitionBy } : {}),
  });
  const units = Math.max(1, Math.round(rows / rowsPerUnit));
  return { kind, def, info, units, rowsPerUnit, timeline: { startUs, spacingUs: (endUs - startUs) / units }, source };
}

const plans = [
  await plan("call", callRows, ROWS_PER_CALL, callSource),
  await plan("registration", callRows * regShare, ROWS_PER_REGISTRATION, registrationSource),
  await plan("default", callRows * defaultShare, ROWS_PER_KEEPALIVE, defaultSource),
].filter((p) => p.units > 1);

/** First index whose base time (startUs + i·spacing) is at or after `us`. */
const indexAt = (p: Plan, us: number) =>
  Math.min(p.units, Math.max(0, Math.ceil((us - startUs) / p.timeline.spacingUs)));
const isoDate = (us: number) => new Date(us / 1000).toISOString().slice(0, 10);

/**
 * Files of one day partition, by capture time as the appliance writes them: compacted files of
 * about `fileRows` rows each, then (newest day only) 30-second flush files. Each file's index range
 * reaches back MAX_SPAN_US so the late messages of calls begun earlier land in it (dataset.ts Slice).
 */
function slices(p: Plan, dayStartUs: number): Array<Slice & { small: boolean }> {
  const partStartUs = Math.max(dayStartUs, startUs);
  const partEndUs = Math.min(dayStartUs + DAY_US, endUs);
  const out: Array<Slice & { small: boolean }> = [];
  const smallFrom = Math.max(partStartUs, partEndUs === endUs ? endUs - smallMinutes * 60_000_000 : partEndUs);
  const slice = (fromUs: number, toUs: number, small: boolean) => {
    const i0 = Math.max(0, indexAt(p, fromUs - MAX_SPAN_US) - 1);
    const i1 = Math.min(p.units, indexAt(p, toUs) + 1);
    if (i1 > i0) out.push({ i0, i1, fromUs, toUs, small });
  };
  const bigUs = Math.max(SMALL_FILE_US, Math.round((fileRows / p.rowsPerUnit) * p.timeline.spacingUs));
  for (let t = partStartUs; t < smallFrom; t += bigUs) slice(t, Math.min(smallFrom, t + bigUs), false);
  for (let t = smallFrom; t < partEndUs; t += SMALL_FILE_US) slice(t, Math.min(partEndUs, t + SMALL_FILE_US), true);
  return out;
}

async function checkPayloads(file: string, def: TableDef): Promise<void> {
  const rows = await engine.readAll(
    `SELECT session_id, caller, callee, method, response_code, cseq_method, payload FROM read_parquet('${file}') USING SAMPLE 300 ROWS`,
  );
  let bad = 0;
  for (const r of rows) {
    const m = parseSip(new TextEncoder().encode(String(r.payload)));
    const ok =
      m.ok &&
      m.value.callId === r.session_id &&
      (m.value.from?.user ?? null) === r.caller &&
      (m.value.to?.user ?? null) === r.callee &&
      (m.value.isRequest ? m.value.method : null) === r.method &&
      (m.value.statusCode ?? null) === r.response_code &&
      m.value.cseqMethod === r.cseq_method;
    if (!ok) {
      bad++;
      if (bad <= 3)
        console.error(
          "payload does not match its columns",
          JSON.stringify({
            ...r,
            parsed: m.ok ? { callId: m.value.callId, from: m.value.from?.user, to: m.value.to?.user } : m.reason,
          }),
        );
    }
  }
  console.log(
    `check ${def.name}: ${rows.length - bad}/${rows.length} sampled payloads parse with src/sip and match session_id, caller, callee, method, response_code, cseq_method`,
  );
  if (bad > 0) throw new Error("generated payloads disagree with their columns");
}

const t0 = performance.now();
const summaries = new Map<string, TableSummary>(
  plans.map((p) => [p.def.name, { table: `main.${p.def.name}`, rows: 0, files: 0, bytes: 0, smallFiles: 0 }]),
);
const expected = plans.reduce((a, p) => a + p.units * p.rowsPerUnit, 0);
let done = 0;
const checked = new Set<string>();
for (let day = Math.floor(startUs / DAY_US) * DAY_US; day < endUs; day += DAY_US) {
  for (const p of plans) {
    for (const s of slices(p, day)) {
      const date = isoDate(s.fromUs);
      const ft = performance.now();
      const file = await writeDataFile(
        (sql) => engine.run(sql),
        (sql) => engine.readAll(sql),
        p.source(p.timeline, s),
        {
          def: p.def,
          info: p.info,
          dataPath: paths.data,
          relPath: await catalog.newDataFilePath(p.info.tableId, date),
          rowGroupRows: 16384,
          partitionValue: date,
          ...(rowsPerPage > 0 && !s.small
            ? { paged: { rowsPerPage, scratchDir: paths.tmp, bloomColumns: LOOKUP_COLUMNS } }
            : {}),
        },
      );
      if (file.recordCount === 0) {
        // A slice no row fell into (sparse table, short last slice): the appliance writes no file.
        rmSync(paths.data + file.path, { force: true });
        continue;
      }
      await catalog.commitDataFiles(p.info.tableId, [file]);
      const sum = summaries.get(p.def.name)!;
      sum.rows += file.recordCount;
      sum.files++;
      sum.bytes += file.fileSizeBytes;
      if (s.small) sum.smallFiles++;
      done += file.recordCount;
      if (check && !checked.has(p.def.name)) {
        checked.add(p.def.name);
        await checkPayloads(paths.data + file.path, p.def);
      }
      const el = (performance.now() - t0) / 1000;
      if (!s.small || sum.smallFiles === 1)
        console.log(
          `${date} ${p.def.name}: ${file.recordCount} rows, ${(file.fileSizeBytes / 1048576).toFixed(1)} MiB (${(file.fileSizeBytes / file.recordCount).toFixed(0)} B/row) in ${((performance.now() - ft) / 1000).toFixed(1)} s` +
            ` | total ${(done / 1e6).toFixed(2)} M rows, ${(done / el / 1000).toFixed(0)} k rows/s, ETA ${(((expected - done) * el) / done / 60).toFixed(1)} min, load ${loadAverage()}`,
        );
    }
  }
}
const generationSeconds = (performance.now() - t0) / 1000;

// Sample targets for run.ts: random calls over the whole week (the same per-call SQL as the rows).
const call = plans.find((p) => p.kind === "call")!;
const idx = Array.from({ length: Math.min(2000, call.units) }, () => Math.floor(Math.random() * call.units));
const sampleRows = await engine.readAll(
  `SELECT ${CALL_ID_SQL} AS call_id, t0, b2b, answered, caller, callee FROM (SELECT ${callFields(call.timeline)} FROM (SELECT unnest([${idx.join(",")}]::BIGINT[]) AS i))`,
);
const samples: SampleCall[] = sampleRows.map((r) => ({
  callId: String(r.call_id),
  t0Us: Number(r.t0),
  legs: r.b2b ? 2 : 1,
  answered: Boolean(r.answered),
  caller: String(r.caller),
  callee: String(r.callee),
}));
const manifest: Manifest = {
  generatedAt: new Date().toISOString(),
  startUs,
  endUs,
  days,
  generationSeconds,
  tables: [...summaries.values()],
  samples,
};
await Bun.write(paths.manifest, JSON.stringify(manifest, null, 1));
engine.close();
await catalog.close();
const rows = manifest.tables.reduce((a, t) => a + t.rows, 0);
const bytes = manifest.tables.reduce((a, t) => a + t.bytes, 0);
console.log(
  `done: ${rows} rows, ${manifest.tables.reduce((a, t) => a + t.files, 0)} files, ${(bytes / 2 ** 30).toFixed(2)} GiB in ${(generationSeconds / 60).toFixed(1)} min (${(rows / generationSeconds / 1000).toFixed(0)} k rows/s)`,
);
for (const t of manifest.tables)
  console.log(
    `  ${t.table}: ${t.rows} rows, ${t.files} files (${t.smallFiles} small), ${(t.bytes / 2 ** 30).toFixed(2)} GiB, ${(t.bytes / t.rows).toFixed(0)} B/row`,
  );
