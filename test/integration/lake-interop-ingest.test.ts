/**
 * DuckLake interoperability of the real write path (required: "A stock DuckDB with the ducklake and
 * sqlite extensions must attach the catalog and read the same rows"). The appliance ingests SIP over
 * HEP/UDP in two batches, each forced into Parquet with `lake.flush()`, and stops. Then DuckDB 1.5.5
 * with the ducklake extension (test/peers/ducklake_queries.py in the venv of scripts/python-peers.sh)
 * attaches `ducklake:sqlite:<catalog>` read-only and must return exactly what our engine returned
 * for the same SQL: counts, every row, per-Call-ID aggregates, time travel to the first snapshot
 * with data, column types. The extension's own views of the catalog (snapshots, file list, table
 * info, insertions between snapshots, orphaned files) must agree with our catalog and the disk.
 */
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, register, request, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";

const PEER_SCRIPT = resolve(import.meta.dir, "../peers/ducklake_queries.py");

type Row = Record<string, unknown>;

/** Runs named statements in the stock DuckDB with the catalog attached as `l`. */
function peerQueries(
  catalog: string,
  dataPath: string,
  queries: Record<string, string>,
  mode: "ro" | "rw" = "ro",
): Record<string, Row[]> {
  const p = Bun.spawnSync([pyPeersPython(), PEER_SCRIPT, catalog, dataPath, mode, JSON.stringify(queries)], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (!p.success) throw new Error(`ducklake_queries.py failed (${p.exitCode}): ${p.stderr.toString()}`);
  return JSON.parse(p.stdout.toString()) as Record<string, Row[]>;
}

// Half past the previous hour, in µs: all messages fall on one date, so each flush writes one file.
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000_000 - 1_800_000_000;
let seq = 0;
function hep(payload: string, from = "10.1.0.1", to = "10.1.0.2"): Uint8Array {
  seq++;
  return encodeHep3({
    ipFamily: 4,
    ipProtocol: 17,
    srcIp: from,
    dstIp: to,
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: T0 + seq * 1000,
    protoType: 1,
    captureId: 3001,
    nodeName: "interop",
    payload,
  });
}

/** One call's messages in order, and the event names the lake must show for them. */
function callMessages(callId: string, part: "setup" | "teardown" | "short"): Array<[string, Uint8Array]> {
  const c = { callId, from: "alice", to: "bob", fromTag: "f1", toTag: "t1" };
  const back = (code: number, reason: string, method = "INVITE", cseq = 1) =>
    hep(response(code, reason, method, { ...c, cseq }), "10.1.0.2", "10.1.0.1");
  if (part === "teardown")
    return [
      ["BYE", hep(request("BYE", { ...c, cseq: 2 }))],
      ["200", back(200, "OK", "BYE", 2)],
    ];
  const out: Array<[string, Uint8Array]> = [["INVITE", hep(invite(c))]];
  if (part === "setup") out.push(["100", back(100, "Trying")]);
  out.push(["180", back(180, "Ringing")], ["200", back(200, "OK")], ["ACK", hep(request("ACK", { ...c, cseq: 1 }))]);
  return out;
}

const CALL = "main.hep_proto_1_call";
const REG = "main.hep_proto_1_registration";

/** SQL run by both engines; `{call}` / `{reg}` become `svc_lake.main.…` for us and `l.main.…` for DuckDB. */
function comparedQueries(firstDataSnapshot: number): Record<string, string> {
  return {
    count: "SELECT count(*) AS n FROM {call}",
    rows: "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM {call} ORDER BY uuid",
    perCall: `SELECT session_id, count(*) AS n, string_agg(event, ',' ORDER BY "timestamp") AS events, min("timestamp")::VARCHAR AS first, max("timestamp")::VARCHAR AS last
              FROM {call} GROUP BY session_id ORDER BY session_id`,
    atFirst: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM {call} AT (VERSION => ${firstDataSnapshot}) ORDER BY uuid`,
    beforeFirst: `SELECT count(*) AS n FROM {call} AT (VERSION => ${firstDataSnapshot - 1})`,
    callTypes: "SELECT column_name, column_type FROM (DESCRIBE {call})",
    regRows: "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM {reg} ORDER BY uuid",
    regTypes: "SELECT column_name, column_type FROM (DESCRIBE {reg})",
  };
}

const fill = (sql: string, prefix: string) =>
  sql.replaceAll("{call}", `${prefix}.${CALL}`).replaceAll("{reg}", `${prefix}.${REG}`);
const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

peerTest(
  "a stock DuckDB with the ducklake extension reads the lake the appliance wrote: same rows, time travel, types, files",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-interop-ingest-");
    const catalogPath = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake") + "/";
    const expected = new Map<string, string[]>(); // Call-ID → events in time order
    const batch1: Uint8Array[] = [];
    const batch2: Uint8Array[] = [];
    const add = (to: Uint8Array[], callId: string, msgs: Array<[string, Uint8Array]>) => {
      expected.set(callId, [...(expected.get(callId) ?? []), ...msgs.map((m) => m[0])]);
      to.push(...msgs.map((m) => m[1]));
    };
    for (let i = 0; i < 40; i++) add(batch1, `interop-${i}@svc`, callMessages(`interop-${i}@svc`, "setup"));
    for (let i = 0; i < 20; i++)
      batch1.push(hep(register({ callId: `reg-${i}@svc`, user: `user${i}`, expires: 600 + i }), "10.1.0.9"));
    const batch1Calls = [...expected.values()].reduce((n, e) => n + e.length, 0);
    for (let i = 0; i < 40; i++) add(batch2, `interop-${i}@svc`, callMessages(`interop-${i}@svc`, "teardown"));
    for (let i = 40; i < 60; i++) add(batch2, `interop-${i}@svc`, callMessages(`interop-${i}@svc`, "short"));
    for (let i = 20; i < 30; i++)
      batch2.push(hep(register({ callId: `reg-${i}@svc`, user: `user${i}`, expires: 600 + i }), "10.1.0.9"));
    const totalCalls = [...expected.values()].reduce((n, e) => n + e.length, 0);

    const ours: Record<string, Row[]> = {};
    let firstDataSnapshot = 0;
    let afterFirstFlush = 0;
    let finalSnapshot = 0;
    {
      await using a = await startTestAppliance(dir.path, {
        storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000 } },
      });
      const lake = a.app.lake!;
      const udp = await Bun.udpSocket({});
      const port = a.app.ingest!.listeners.udp!.port();
      const count = async (table: string) => {
        await lake.sync();
        return Number((await lake.query(`SELECT count(*) AS n FROM svc_lake.${table}`)).rows[0]!.n);
      };
      const before = await lake.snapshotId();
      for (const p of batch1) udp.send(p, port, "127.0.0.1");
      await waitFor(
        "batch 1 in the buffer",
        async () => (await count(CALL)) === batch1Calls && (await count(REG)) === 20,
      );
      await lake.flush();
      afterFirstFlush = await lake.snapshotId();
      for (const p of batch2) udp.send(p, port, "127.0.0.1");
      await waitFor(
        "batch 2 in the buffer",
        async () => (await count(CALL)) === totalCalls && (await count(REG)) === 30,
      );
      await lake.flush();
      finalSnapshot = await lake.snapshotId();
      udp.close();
      expect(afterFirstFlush).toBeGreaterThan(before);
      expect(finalSnapshot).toBeGreaterThan(afterFirstFlush);

      // The first snapshot in which the call table got rows, from our own catalog.
      const cat = openCatalog({ path: catalogPath, dataPath, readOnly: true });
      try {
        const callId = cat.getTable("main", "hep_proto_1_call")!.tableId;
        for (let s = before + 1; s <= afterFirstFlush && firstDataSnapshot === 0; s++) {
          if (cat.listDataFiles(callId, { snapshotId: s, stats: false }).length > 0) firstDataSnapshot = s;
        }
      } finally {
        cat.close();
      }
      expect(firstDataSnapshot).toBeGreaterThan(0);
      for (const [name, sql] of Object.entries(comparedQueries(firstDataSnapshot)))
        ours[name] = (await lake.query(fill(sql, "svc_lake"))).rows;
    }

    // Our own answers are right before they are compared: every message once, in order, per call.
    expect(ours.count).toEqual([{ n: totalCalls }]);
    expect(Object.fromEntries(ours.perCall!.map((r) => [String(r.session_id), String(r.events).split(",")]))).toEqual(
      Object.fromEntries([...expected].sort(([x], [y]) => (x < y ? -1 : 1))),
    );
    expect(ours.atFirst!.length).toBe(batch1Calls);
    expect(ours.beforeFirst).toEqual([{ n: 0 }]);
    expect(ours.regRows!.map((r) => [r.session_id, r.aor, r.expires]).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => [`reg-${i}@svc`, `sip:user${i}@example.com`, String(600 + i)]).sort(),
    );

    // The stock reader, read-only, on the stopped appliance's files.
    const hashBefore = sha256(catalogPath);
    const peer = peerQueries(catalogPath, dataPath, {
      ...Object.fromEntries(Object.entries(comparedQueries(firstDataSnapshot)).map(([k, sql]) => [k, fill(sql, "l")])),
      snapshots:
        "SELECT snapshot_id, list_contains(coalesce(changes['tables_inserted_into'], []), (SELECT table_id::VARCHAR FROM ducklake_table_info('l') WHERE table_name = 'hep_proto_1_call')) AS call_insert FROM ducklake_snapshots('l') ORDER BY snapshot_id",
      current: "SELECT id FROM ducklake_current_snapshot('l')",
      files:
        "SELECT data_file, data_file_size_bytes, data_file_footer_size, delete_file FROM ducklake_list_files('l', 'hep_proto_1_call') ORDER BY data_file",
      tableInfo:
        "SELECT table_name, table_id, file_count, file_size_bytes, delete_file_count FROM ducklake_table_info('l') ORDER BY table_id",
      insertedFirst: `SELECT count(*) AS n FROM ducklake_table_insertions('l', 'main', 'hep_proto_1_call', 0, ${afterFirstFlush})`,
      insertedSecond: `SELECT count(*) AS n, count(DISTINCT session_id) AS calls FROM ducklake_table_insertions('l', 'main', 'hep_proto_1_call', ${afterFirstFlush + 1}, ${finalSnapshot})`,
    });
    expect(sha256(catalogPath)).toBe(hashBefore);

    for (const name of Object.keys(comparedQueries(firstDataSnapshot)))
      expect({ name, rows: peer[name] }).toEqual({ name, rows: ours[name] });
    expect(peer.current).toEqual([{ id: finalSnapshot }]);
    expect(peer.snapshots!.map((r) => r.snapshot_id)).toEqual(Array.from({ length: finalSnapshot + 1 }, (_, i) => i));
    expect(peer.snapshots!.find((r) => r.call_insert === true)?.snapshot_id).toBe(firstDataSnapshot);
    expect(peer.insertedFirst).toEqual([{ n: batch1Calls }]);
    expect(peer.insertedSecond).toEqual([{ n: totalCalls - batch1Calls, calls: 60 }]);

    // The extension's file list and table info against our catalog and the disk.
    const cat = openCatalog({ path: catalogPath, dataPath, readOnly: true });
    try {
      const mine = cat.listTables().map((t) => {
        const files = cat.listDataFiles(t.tableId, { stats: false });
        return {
          table_name: t.name,
          table_id: t.tableId,
          file_count: files.length,
          file_size_bytes: files.reduce((n, f) => n + f.fileSizeBytes, 0),
          delete_file_count: 0,
        };
      });
      expect(peer.tableInfo).toEqual(mine.sort((x, y) => x.table_id - y.table_id));
      const callFiles = cat.listDataFiles(cat.getTable("main", "hep_proto_1_call")!.tableId, { stats: false });
      expect(callFiles.length).toBe(2);
      expect(peer.files).toEqual(
        callFiles
          .map((f) => ({
            data_file: f.absolutePath,
            data_file_size_bytes: statSync(f.absolutePath).size,
            data_file_footer_size: f.footerSize,
            delete_file: null,
          }))
          .sort((x, y) => (x.data_file < y.data_file ? -1 : 1)),
      );
      // Orphan and cleanup checks write to the catalog even as dry runs: run them on a copy.
      const copy = cat.backup(join(dir.path, "catalog-copy.sqlite"));
      const cleanup = peerQueries(
        copy,
        dataPath,
        {
          orphans: "SELECT path FROM ducklake_delete_orphaned_files('l', dry_run => true, cleanup_all => true)",
          old: "SELECT path FROM ducklake_cleanup_old_files('l', dry_run => true, cleanup_all => true)",
        },
        "rw",
      );
      expect(cleanup).toEqual({ orphans: [], old: [] });
    } finally {
      cat.close();
    }
  },
  60_000,
);
