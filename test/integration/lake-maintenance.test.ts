import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";

const DAY_US = 86_400_000_000;

async function sendInvites(a: Awaited<ReturnType<typeof startTestAppliance>>, prefix: string, n: number, tsUs: number) {
  const udp = await Bun.udpSocket({});
  const port = a.app.ingest!.listeners.udp!.port();
  for (let i = 0; i < n; i++) {
    udp.send(
      encodeHep3({
        srcIp: "10.1.0.1",
        dstIp: "10.1.0.2",
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: tsUs + i,
        protoType: 1,
        payload: invite({ callId: `${prefix}-${i}`, from: "u" + i, to: "v" }),
      }),
      port,
      "127.0.0.1",
    );
  }
  udp.close();
  const lake = a.app.lake!;
  await waitFor(`${n} rows of ${prefix}`, async () => {
    await lake.sync();
    const r = await lake.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`, [
      `${prefix}-%`,
    ]);
    return r.rows[0]!.n === n;
  });
  await lake.flush();
}

describe("lake maintenance", () => {
  test("compaction merges small files without changing results; time travel works until snapshots expire", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      storage: {
        lakehouse: {
          flush_interval_sec: 3600,
          compaction: { min_age_sec: 0, check_interval_sec: 3600 },
          snapshot_retention_sec: 60,
          retention: { days: 0 },
        },
      },
    });
    const lake = a.app.lake!;
    const now = Date.now() * 1000;
    for (let b = 0; b < 4; b++) await sendInvites(a, `c${b}`, 25, now + b * 1000);
    const key = "main.hep_proto_1_call";
    const before = await lake.files(key);
    expect(before.length).toBe(4);
    const snapBefore = await lake.snapshotId();
    const q = `SELECT session_id, caller, timestamp, payload FROM svc_lake.main.hep_proto_1_call ORDER BY session_id`;
    const rowsBefore = (await lake.query(q)).rows;

    const r = await lake.maintain();
    expect(r.merged).toBe(4);
    const after = await lake.files(key);
    expect(after.length).toBe(1);
    expect(after[0]!.rows).toBe(100);
    expect((await lake.query(q)).rows).toEqual(rowsBefore);
    // Flush files keep arrival order; the merged file is sorted by the table's key (Call-ID, time).
    const inFile = async (path: string) =>
      (
        await lake.query(
          `SELECT session_id, epoch_us(timestamp) AS ts FROM read_parquet('${join(dir.path, "lake", path)}', file_row_number = true) ORDER BY file_row_number`,
        )
      ).rows.map((r) => [String(r.session_id), Number(r.ts)] as const);
    const byKey = (rows: ReadonlyArray<readonly [string, number]>) =>
      [...rows].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1]));
    const merged = await inFile(after[0]!.path);
    expect(merged).toEqual(byKey(merged));
    const flushed = (await Promise.all(before.map((f) => inFile(f.path)))).flat();
    expect(flushed).not.toEqual(byKey(flushed));
    // The superseded files are still on disk and readable by time travel.
    for (const f of before) expect(existsSync(join(dir.path, "lake", f.path))).toBe(true);
    const tt = await lake.query(
      `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call AT (VERSION => ${snapBefore})`,
    );
    expect(tt.rows[0]!.n).toBe(100);

    // Two minutes later the old snapshots are past snapshot_retention_sec: files deleted, data intact.
    const r2 = await lake.maintain(Date.now() + 120_000);
    expect(r2.deleted).toBe(4);
    for (const f of before) expect(existsSync(join(dir.path, "lake", f.path))).toBe(false);
    expect((await lake.query(q)).rows).toEqual(rowsBefore);
  });

  test("retention retires files older than retention.days; orphans of a crashed flush are removed at start", async () => {
    await using dir = tempDir();
    const overrides = {
      storage: {
        lakehouse: {
          flush_interval_sec: 3600,
          retention: { days: 14 },
          compaction: { enable: false, check_interval_sec: 3600 },
        },
      },
    };
    {
      await using a = await startTestAppliance(dir.path, overrides);
      const lake = a.app.lake!;
      const now = Date.now() * 1000;
      await sendInvites(a, "old", 10, now - 30 * DAY_US);
      await sendInvites(a, "new", 10, now - 1 * DAY_US);
      const r = await lake.maintain();
      expect(r.retired).toBe(1);
      const left = await lake.query(
        `SELECT DISTINCT split_part(session_id, '-', 1) AS p FROM svc_lake.main.hep_proto_1_call`,
      );
      expect(left.rows).toEqual([{ p: "new" }]);
    }
    const tableDir = join(dir.path, "lake", "main", "hep_proto_1_call", "date=2026-01-01");
    mkdirSync(tableDir, { recursive: true });
    writeFileSync(join(tableDir, "ducklake-0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.parquet"), "not really parquet");
    writeFileSync(join(tableDir, "keep-me.parquet"), "someone else's file");
    // Left over for more than an hour: younger unknown files are left in place (docs/STORAGE.md
    // "Compaction, retention and orphans").
    const longAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(join(tableDir, "ducklake-0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.parquet"), longAgo, longAgo);
    {
      await using a = await startTestAppliance(dir.path, overrides);
      expect(existsSync(join(tableDir, "ducklake-0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.parquet"))).toBe(false);
      // Not reserved by the writer: set aside in the quarantine, not deleted (docs/OPERATIONS.md "Orphans at start and the quarantine").
      expect([
        ...new Bun.Glob(
          "_quarantine/*/main/hep_proto_1_call/date=2026-01-01/ducklake-0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.parquet",
        ).scanSync({ cwd: join(dir.path, "lake") }),
      ]).toHaveLength(1);
      expect(existsSync(join(tableDir, "keep-me.parquet"))).toBe(true);
      const r = await a.app.lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call`);
      expect(r.rows[0]!.n).toBe(10);
    }
  });
});
