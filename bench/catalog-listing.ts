/**
 * What the view refresh after each flush pays for the catalog listing, against the number of live
 * files of the table (they pile up between compactions: one per flush, several a second under
 * load, for compaction.min_age_sec). --files flushes of a few rows each into one table, then the
 * listing the refresh needs, timed (CPU of this thread per call, median of --repeat):
 *   bun bench/catalog-listing.ts [--files 600] [--repeat 20]
 * `full`: every file with every column's statistics; `bare`: files without statistics (what
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
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const files = Number(args.get("files") ?? 600);
const repeat = Number(args.get("repeat") ?? 20);
const dir = mkdtempSync(join(tmpdir(), "svc-listing-"));
const app = await startAppliance(testConfig(dir, { storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000_000 } } }), createLogger({ test: true }));
try {
  const lake = app.lake!;
  const { packet, template } = packetSource("listing");
  const buf = template.slice();
  for (let f = 0; f < files; f++) {
    for (let n = f * 5; n < f * 5 + 5; n++) app.ingest!.pipeline.handlePacket(packet(n, buf), "udp");
    await lake.flush();
  }
  const catalog = (lake as unknown as { parts: { catalog: import("../src/lake/catalog-port.ts").LakeCatalog } }).parts.catalog;
  const table = catalog.getTable("main", "hep_proto_1_call")!;
  const time = (fn: () => unknown) => {
    const out: number[] = [];
    for (let r = 0; r < repeat; r++) {
      const c0 = process.cpuUsage();
      fn();
      const c = process.cpuUsage(c0);
      out.push((c.user + c.system) / 1000);
    }
    return out.sort((a, b) => a - b)[Math.floor(out.length / 2)]!;
  };
  const live = catalog.listDataFiles(table.tableId, { statsColumns: [] }).length;
  const full = time(() => catalog.listDataFiles(table.tableId));
  const bare = time(() => catalog.listDataFiles(table.tableId, { statsColumns: [] }));
  const ids = catalog
    .listDataFiles(table.tableId, { statsColumns: [] })
    .slice(-1)
    .map((f) => f.dataFileId);
  const one = time(() => catalog.listDataFiles(table.tableId, { fileIds: ids }));
  console.log(JSON.stringify({ live_files: live, columns: table.columns.length, full_ms: full, bare_ms: bare, stats_of_one_new_file_ms: one }));
} finally {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
}
