/**
 * The object store of a real `svc serve` process (test/peers/svc-child.ts) goes away and comes back
 * (docs/STORAGE.md "When the store is down"): the store's endpoint is a TCP proxy
 * (test/peers/tcp-proxy.ts) in front of the peer (moto for S3, Azurite for Azure Blob); the proxy
 * stops passing bytes for SVC_TEST_STORE_OUTAGE_SEC seconds (default 5; the judged run is 60) while
 * HEP streams in over UDP and TCP, connections stay open and the peer keeps running (its in-memory
 * bucket survives). Meanwhile /health's `lake:store` check warns and no row reaches Parquet; after
 * the proxy passes bytes again the check passes, and every accepted row is in the store exactly
 * once: the catalog's live files are read back from the store's objects, every Call-ID once.
 * Used by lake-s3-outage.test.ts and lake-azure-outage.test.ts.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { expect } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import type { ObjectStore } from "../../src/lake/store/index.ts";
import { testConfigJson } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { settledMetric, spawnSvc, startHepSender, type SvcChild } from "../peers/svc-child.ts";
import { TcpProxy } from "../peers/tcp-proxy.ts";

export const STORE_OUTAGE_SEC = Number(process.env.SVC_TEST_STORE_OUTAGE_SEC ?? 5);
const MAX_BUFFERED = 20_000;
/** The store's request time-out in the child: a request the proxy swallows fails after this. */
const STORE_TIMEOUT_SEC = 2;

interface Health {
  checks: Record<string, Array<{ status: string; observedValue: number; output?: string }>>;
}
const health = async (c: SvcChild) => (await (await c.node("/health")).json()) as Health;

/** The live data files of a SQLite catalog as store keys (relative paths nest: schema, table, file). */
function liveKeys(catalogPath: string): string[] {
  const db = new Database(catalogPath, { readonly: true });
  try {
    return db
      .query<{ key: string }, []>(
        `SELECT s.path || t.path || f.path AS key FROM ducklake_data_file f
          JOIN ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
          WHERE f.end_snapshot IS NULL AND f.path_is_relative ORDER BY 1`,
      )
      .all()
      .map((r) => r.key);
  } finally {
    db.close();
  }
}

/** Rows and distinct Call-IDs of the call table, read from the store's objects of the live files. */
async function readBack(store: ObjectStore, keys: string[], dir: string): Promise<{ rows: number; ids: number }> {
  const calls = keys.filter((k) => k.includes("hep_proto_1_call/"));
  if (calls.length === 0) return { rows: 0, ids: 0 };
  mkdirSync(dir, { recursive: true });
  const local: string[] = [];
  for (const [i, k] of calls.entries()) {
    const p = join(dir, `read-${i}.parquet`);
    writeFileSync(p, await store.get(k));
    local.push(p);
  }
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  try {
    const r = await con.runAndReadAll(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT session_id)::INTEGER AS d FROM read_parquet([${local.map((p) => `'${p}'`).join(", ")}])`,
    );
    const row = r.getRowObjects()[0] as { n: number; d: number };
    return { rows: row.n, ids: row.d };
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

export interface StoreUnderTest {
  /** The port the peer listens on (the proxy's target). */
  port: number;
  /** storage.lakehouse keys for the store, its endpoint at `endpoint`. */
  lakehouse: (endpoint: string) => Record<string, unknown>;
  /** The peer's endpoint with the port replaced (what the child is given: the proxy's). */
  endpointAt: (port: number) => string;
  /** The same store, opened directly on the peer (reading back). */
  direct: () => ObjectStore;
  /** storage.lakehouse.store_timeout_sec of the child (default 2; Azure Blob tries each request three times). */
  timeoutSec?: number;
}

export interface OutageFigures {
  outageSec: number;
  accepted: number;
  refused: number;
  landed: number;
  recoverSec: number;
  buffered: number;
}

export async function storeOutage(label: string, s: StoreUnderTest): Promise<OutageFigures> {
  await using dir = tempDir("svc-store-outage-");
  const proxy = new TcpProxy(s.port).start();
  const cfg = testConfigJson(dir.path, {
    log: { level: "info" },
    coordinator: { auth: { admin_password_hash: sha256Hex("store-outage") } },
    storage: {
      lakehouse: {
        ...s.lakehouse(s.endpointAt(proxy.port)),
        state_path: join(dir.path, "state"),
        flush_interval_sec: 0.5,
        batch_size: 200,
        store_timeout_sec: s.timeoutSec ?? STORE_TIMEOUT_SEC,
        max_buffered_rows: MAX_BUFFERED,
        compaction: { enable: false },
        tuning: { threads: 1, memory_limit: "256MB" },
      },
    },
  });
  const cfgPath = join(dir.path, "svc.json");
  writeFileSync(cfgPath, JSON.stringify(cfg));
  const svc = await spawnSvc("svc", cfgPath, {}, 90_000);
  const sender = await startHepSender(svc, "sto", 2);
  try {
    await waitFor("a first commit", async () => (await svc.metric("svc_lake_rows_written_total")) > 0, 60_000, 100);
    expect((await health(svc)).checks["lake:store"]?.[0]?.status).toBe("pass");
    proxy.cut();
    const writtenAtCut = await svc.metric("svc_lake_rows_written_total");
    const down = await waitFor(
      "/health shows the store down",
      async () => {
        const h = await health(svc);
        return h.checks["lake:store"]?.[0]?.status === "warn" ? h : undefined;
      },
      60_000,
      100,
    );
    expect(down.checks["lake:flush"]?.[0]?.output).toContain("store");
    const t0 = performance.now();
    await Bun.sleep(STORE_OUTAGE_SEC * 1000); // the length of the outage is the experiment, not a wait for a condition
    const buffered = await svc.metric("svc_lake_buffered_rows");
    const stillDown = await health(svc);
    // A flush whose upload finished just before the cut may commit after it: nothing more.
    const writtenInOutage = (await svc.metric("svc_lake_rows_written_total")) - writtenAtCut;
    proxy.restore();
    const outageMs = performance.now() - t0;
    const tBack = performance.now();
    expect(stillDown.checks["lake:store"]?.[0]?.status).toBe("warn");
    expect(buffered).toBeGreaterThan(0);
    await waitFor(
      "/health shows the store back",
      async () => (await health(svc)).checks["lake:store"]?.[0]?.status === "pass",
      120_000,
      100,
    );
    const recoverMs = performance.now() - tBack;
    const sent = await sender.stop();
    await waitFor(
      "every TCP frame decoded",
      async () => (await svc.metric("svc_hep_packets_received_total")) >= sent.tcp,
      30_000,
      100,
    );
    const received = await settledMetric(svc, "svc_hep_packets_received_total");
    const dropped = await svc.metric("svc_hep_packets_dropped_total");
    const stopped = await svc.stop();
    expect({ code: stopped.code, lost: stopped.lost, written: stopped.written }).toEqual({
      code: 0,
      lost: 0,
      written: stopped.accepted,
    });
    expect(received).toBe(stopped.accepted + dropped);
    expect(writtenInOutage).toBeLessThanOrEqual(200);
    // Exactly once in the store: the catalog's live files, read from the store's objects.
    const landed = await readBack(s.direct(), liveKeys(join(dir.path, "catalog.sqlite")), join(dir.path, "read"));
    expect(landed).toEqual({ rows: stopped.accepted, ids: stopped.accepted });
    const figures = {
      outageSec: outageMs / 1000,
      accepted: stopped.accepted,
      refused: dropped,
      landed: landed.rows,
      recoverSec: recoverMs / 1000,
      buffered,
    };
    console.log(
      `${label}: store unreachable ${figures.outageSec.toFixed(1)} s; buffered at its end ${buffered} rows (bound ${MAX_BUFFERED}); accepted ${figures.accepted} (UDP ${sent.udp} + TCP ${sent.tcp} sent), ` +
        `refused ${figures.refused}, landed once ${figures.landed}; /health back ${figures.recoverSec.toFixed(1)} s after the store; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`,
    );
    return figures;
  } catch (e) {
    console.log(JSON.stringify(svc.lines.filter((l) => l.level !== "debug").slice(-15)));
    throw e;
  } finally {
    await sender.stop();
    proxy.stop();
    if (svc.proc.exitCode === null) await svc.kill9();
  }
}
