/**
 * Process CPU per row of the lake's flush (COPY to Parquet, fsync, statistics, catalog commit,
 * view refresh) against the rows per flush: each flush has a fixed part, so small flushes cost
 * more per row. Realistic INVITEs go through the real pipeline into the spool in seals of
 * --seal-rows (100 ms at 50 k msgs/s), a flush every --every rows; only the flushes are timed.
 *   bun bench/flush-size.ts [--rows 200000] [--every 10000,50000] [--seal-rows 5000]
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
const rows = Number(args.get("rows") ?? 200_000);
const sealRows = Number(args.get("seal-rows") ?? 5000);
for (const every of (args.get("every") ?? "10000,50000").split(",").map(Number)) {
  const dir = mkdtempSync(join(tmpdir(), "svc-flushsize-"));
  const app = await startAppliance(
    testConfig(dir, {
      storage: {
        lakehouse: {
          flush_interval_sec: 3600,
          batch_size: 1_000_000_000,
          max_buffered_rows: 10_000_000,
          tuning: { threads: 2, memory_limit: "2GB" },
        },
      },
    }),
    createLogger({ test: true }),
  );
  try {
    const lake = app.lake!;
    const { packet, template } = packetSource(`fs${every}`);
    const buf = template.slice();
    // Warm-up (JIT, first COPY): 5 flushes not counted.
    for (let n = 0; n < 5 * sealRows; ) {
      for (const end = n + sealRows; n < end; n++) app.ingest!.pipeline.handlePacket(packet(rows + n, buf), "udp");
      await lake.sync();
      await lake.flush();
    }
    let cpuUs = 0;
    let flushes = 0;
    for (let n = 0; n < rows; ) {
      for (const end = Math.min(rows, n + sealRows); n < end; n++)
        app.ingest!.pipeline.handlePacket(packet(n, buf), "udp");
      await lake.sync();
      if (n % every === 0 || n === rows) {
        const c0 = process.cpuUsage();
        await lake.flush();
        const c = process.cpuUsage(c0);
        cpuUs += c.user + c.system;
        flushes++;
      }
    }
    console.log(
      JSON.stringify({
        rows_per_flush: every,
        flushes,
        flush_cpu_us_per_row: Math.round((cpuUs / rows) * 100) / 100,
        flush_cpu_ms_per_flush: Math.round(cpuUs / flushes / 100) / 10,
      }),
    );
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
