/**
 * What the view refresh after each flush pays for the catalog listing, against the number of live
 * files of the table (they pile up between compactions: one per flush, several a second under
 * load, for compaction.min_age_sec). --files flushes of a few rows each into one table, then the
 * listing the refresh needs, timed (CPU of this thread per call, median of --repeat):
 *   bun bench/catalog-listing.ts [--files 600] [--repeat 20]
 * Also the wall time of each of those flushes (median, p90). `full`: every file with every column's statistics; `bare`: files without statistics (what
 * the incremental refresh reads at each commit, docs/ARCHITECTURE.md "Write path").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../src/core/index.ts";
import { startAppliance } from "../src/main.ts";
import { testConfig } from "../test/appliance.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const files = Number(args.get("files") ?? 600);
const repeat = Number(args.get("repeat") ?? 20);
const dir = mkdtempSync(join(tmpdir(), "svc-listing-"));
const app = await startAppliance(
  testConfig(dir, { storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000_000 } } }),
  createLogger({ test: true }),
);
try {
  const lake = app.lake!;
  const { packet, template } = packetSource("listing");
  const buf = template.slice();
  // Wall time of each flush (spool → Parquet → catalog commit → view refresh): the catalog's
  // share of the write path, compared before and after the port became asynchronous.
  const flushMs: number[] = [];
  for (let f = 0; f < files; f++) {
    for (let n = f * 5; n < f * 5 + 5; n++) app.ingest!.pipeline.handlePacket(packet(n, buf), "udp");
    const t0 = performance.now();
    await lake.flush();
    flushMs.push(performance.now() - t0);
  }
  flushMs.sort((a, b) => a - b);
  const catalog = (lake as unknown as { parts: { catalog: import("../src/lake/catalog-port.ts").LakeCatalog } }).parts
    .catalog;
  const table = (await catalog.getTable("main", "hep_proto_1_call"))!;
  const time = async (fn: () => Promise<unknown>) => {
    const out: number[] = [];
    for (let r = 0; r < repeat; r++) {
      const c0 = process.cpuUsage();
      await fn();
      const c = process.cpuUsage(c0);
      out.push((c.user + c.system) / 1000);
    }
    return out.sort((a, b) => a - b)[Math.floor(out.length / 2)]!;
  };
  const live = (await catalog.listDataFiles(table.tableId, { statsColumns: [] })).length;
  const full = await time(() => catalog.listDataFiles(table.tableId));
  const bare = await time(() => catalog.listDataFiles(table.tableId, { statsColumns: [] }));
  const ids = (await catalog.listDataFiles(table.tableId, { statsColumns: [] })).slice(-1).map((f) => f.dataFileId);
  const one = await time(() => catalog.listDataFiles(table.tableId, { fileIds: ids }));
  console.log(
    JSON.stringify({
      live_files: live,
      columns: table.columns.length,
      full_ms: full,
      bare_ms: bare,
      stats_of_one_new_file_ms: one,
      flush_ms_median: flushMs[Math.floor(flushMs.length / 2)],
      flush_ms_p90: flushMs[Math.floor(flushMs.length * 0.9)],
    }),
  );
} finally {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
}
