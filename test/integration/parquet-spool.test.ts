/**
 * The Parquet spool (storage.lakehouse.spool_format = parquet, docs/STORAGE.md "Parquet written by
 * svc"): the HEP ingest thread seals Parquet row groups, the flush joins them into a data file
 * without DuckDB, and the lake, the catalog's statistics and a stock DuckDB with the ducklake
 * extension all read exactly the rows that were sent.
 */
import { expect } from "bun:test";
import { resolve } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { PEERS, peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";

const PEER_SCRIPT = resolve(import.meta.dir, "../peers/ducklake_queries.py");
const SEALS = 3;
const PER_SEAL = 1500;
// One date for every row (half past the previous hour), so the flush writes one file.
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000_000 - 1_800_000_000;

const packet = (k: number) =>
  encodeHep3({
    srcIp: `10.2.${(k >> 8) & 255}.${k & 255}`,
    dstIp: "192.0.2.7",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: T0 + k * 1000,
    protoType: 1,
    captureId: 7,
    payload: invite({ callId: `pq-${k}@svc`, from: `u${k}`, to: `d${k % 97}` }),
  });

/**
 * Sends SEALS bodies of PER_SEAL packets over HEP/HTTP, sealing after each, flushes, and checks the
 * data file and the rows. `threads` 0: the main thread writes the rows and seals once per body, so
 * the file has exactly one row group per body; 1: the ingest thread seals on its own clock too.
 */
async function sealsJoined(threads: number): Promise<void> {
  {
    await using dir = tempDir("svc-pqspool-");
    const catalogPath = `${dir.path}/catalog.sqlite`;
    const dataPath = `${dir.path}/lake/`;
    let ours: Array<Record<string, unknown>> = [];
    {
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { threads } },
        storage: { lakehouse: { spool_format: "parquet", flush_interval_sec: 3600, batch_size: 1_000_000 } },
      });
      const lake = a.app.lake!;
      for (let s = 0; s < SEALS; s++) {
        const body = Buffer.concat(Array.from({ length: PER_SEAL }, (_, i) => packet(s * PER_SEAL + i)));
        const r = await fetch(`${a.app.nodeUrl}/api/v1/hep`, { method: "POST", body });
        expect(r.status).toBe(202);
        // Each body is one seal: the thread handed its rows over before the 202; sync seals them.
        await lake.sync();
      }
      await waitFor("every row in the buffer", async () => {
        await lake.sync();
        return (
          Number((await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call")).rows[0]!.n) ===
            SEALS * PER_SEAL || undefined
        );
      });
      await lake.flush();
      ours = (
        await lake.query(
          "SELECT count(*) AS n, count(DISTINCT session_id) AS calls, min(epoch_us(timestamp)) AS t0, max(epoch_us(timestamp)) AS t1, count(DISTINCT caller) AS callers, sum(src_port) AS ports FROM svc_lake.main.hep_proto_1_call",
        )
      ).rows;
      // The data file: three row groups (one per seal), the ids DuckLake maps columns by.
      const cat = openCatalog({ path: catalogPath, dataPath, readOnly: true });
      try {
        const table = cat.getTable("main", "hep_proto_1_call")!;
        const files = cat.listDataFiles(table.tableId, { stats: true });
        expect(files.length).toBe(1);
        const f = files[0]!;
        expect(f.recordCount).toBe(SEALS * PER_SEAL);
        const meta = await lake.query(
          `SELECT count(DISTINCT row_group_id) AS groups, sum(row_group_num_rows) / count(DISTINCT path_in_schema) AS n FROM parquet_metadata('${f.absolutePath}')`,
        );
        expect(meta.rows[0]).toEqual({ groups: threads === 0 ? SEALS : meta.rows[0]!.groups, n: SEALS * PER_SEAL });
        expect(Number(meta.rows[0]!.groups)).toBeGreaterThan(1); // joined, not one COPY
        const ids = await lake.query(
          `SELECT name, field_id FROM parquet_schema('${f.absolutePath}') WHERE name <> 'duckdb_schema' ORDER BY name`,
        );
        expect(ids.rows.map((r) => [r.name, Number(r.field_id)])).toEqual(
          table.columns.map((c) => [c.name, c.columnId]).sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : 1)),
        );
        // The catalog's time statistics are the rows' (newest-first planning reads them).
        const ts = f.columnStats?.timestamp;
        expect(ts?.min).toBeDefined();
        expect(Date.parse(`${String(ts!.min).replace(" ", "T")}Z`) * 1000).toBe(Math.floor(T0 / 1000) * 1000);
      } finally {
        cat.close();
      }
    }
    const n = SEALS * PER_SEAL;
    expect(ours).toEqual([{ n, calls: n, t0: T0, t1: T0 + (n - 1) * 1000, callers: n, ports: 5060 * n }]);
    const p = Bun.spawnSync(
      [
        pyPeersPython(),
        PEER_SCRIPT,
        catalogPath,
        dataPath,
        "ro",
        JSON.stringify({
          all: "SELECT count(*) AS n, count(DISTINCT session_id) AS calls, min(epoch_us(timestamp)) AS t0, max(epoch_us(timestamp)) AS t1, count(DISTINCT caller) AS callers, sum(src_port) AS ports FROM l.main.hep_proto_1_call",
        }),
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    if (!p.success) throw new Error(`ducklake_queries.py failed (${p.exitCode}): ${p.stderr.toString()}`);
    const peer = JSON.parse(p.stdout.toString()) as { all: Array<Record<string, unknown>> };
    expect(peer.all).toEqual(ours);
  }
}

peerTest(
  "main-thread seals joined by the flush: one row group per seal, every row once, ids and statistics, a stock DuckDB reads the same",
  [PEERS.pyDuckLake],
  () => sealsJoined(0),
  120_000,
);

peerTest(
  "ingest-thread seals joined by the flush: every row once, a stock DuckDB reads the same",
  [PEERS.pyDuckLake],
  () => sealsJoined(1),
  120_000,
);
