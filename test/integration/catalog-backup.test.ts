/**
 * `svc catalog backup|list|restore` through the real process (docs/OPERATIONS.md "Catalog backups"):
 * a backup taken while HEP is being ingested and flushed is a consistent snapshot; after a restore
 * the appliance serves exactly the rows of that snapshot; `backups_kept` limits the backups; a
 * restore (and a rebuild) is refused while the appliance holds the writer lock, naming its pid;
 * a backup whose data files are gone is refused before anything changes.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { CALL, count, ingest, rowsOf, sendHep, svc, writeConfig } from "./catalog-tools-harness.ts";

// Frequent commits: a flush every 200 ms while the backup runs.
const OVERRIDES = { storage: { lakehouse: { flush_interval_sec: 0.2, batch_size: 200, backups_kept: 2 } } };

describe("svc catalog", () => {
  test("a backup taken during ingest restores to exactly its rows; restore and rebuild are refused while running", async () => {
    await using dir = tempDir("svc-cat-backup-");
    const cfg = writeConfig(dir.path, OVERRIDES);
    const catalogPath = join(dir.path, "catalog.sqlite");
    let snap = 0;
    let atBackup: Array<Record<string, unknown>> = [];
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      await ingest(a.app, "before", 200);
      // Keep HEP coming (and flushes committing) while the backup runs in another process.
      let sending = true;
      let batch = 0;
      const sender = (async () => {
        while (sending) {
          await sendHep(a.app, `during${batch++}`, 50);
          await Bun.sleep(20);
        }
      })();
      const snapBefore = await a.app.lake!.snapshotId();
      const b = await svc(["catalog", "backup", "--config-path", cfg], dir.path);
      expect(b.stderr).toBe("");
      expect(b.code).toBe(0);
      const m = /^backup (\S+\.bak-\d{8}T\d{9}Z): snapshot (\d+), [\d.]+ KiB\n$/.exec(b.stdout);
      expect(m, b.stdout).not.toBeNull();
      snap = Number(m![2]);
      expect(snap).toBeGreaterThan(snapBefore);
      // Taken online: commits go on after it.
      await waitFor("more commits after the backup", async () => (await a.app.lake!.snapshotId()) > snap + 2);
      sending = false;
      await sender;

      // The writer holds the lock: restore and rebuild are refused, naming this process.
      for (const args of [
        ["catalog", "restore"],
        ["system", "--rebuild-catalog"],
      ]) {
        const r = await svc([...args, "--config-path", cfg], dir.path);
        expect(r.stdout).toBe("");
        expect(r.stderr).toMatch(
          new RegExp(
            `^svc: (restore|rebuild) refused: pid ${process.pid} on \\S+ holds the writer lock ${catalogPath}\\.lock \\(svc serve is running\\); stop it first\\n$`,
          ),
        );
        expect(r.code).toBe(1);
      }
      atBackup = await rowsOf(a.app, CALL, snap);
      await a.app.lake!.flush();
      expect(atBackup.length).toBeGreaterThanOrEqual(200);
      expect(atBackup.length).toBeLessThan(await count(a.app, CALL));
    }
    const r = await svc(["catalog", "restore", "--config-path", cfg], dir.path);
    expect(r.stdout).toMatch(
      new RegExp(
        `^restored ${catalogPath} from ${catalogPath}\\.bak-\\d{8}T\\d{9}Z: snapshot ${snap} \\(.+\\)\\nthe replaced catalog is kept as ${catalogPath}\\.pre-restore\\.\\d{8}T\\d{9}Z\\n$`,
      ),
    );
    expect(r.stderr).toMatch(
      /^svc: warning: \d+ data file\(s\) under .+ are not in this backup \(written after it\); svc serve moves them into .+\/_quarantine at a start once they are an hour old \(it does not delete them\)\./,
    );
    expect(r.code).toBe(0);
    // The files written after the backup are over an hour old when the appliance starts again: the
    // start's sweep sets aside only those (docs/STORAGE.md "Compaction, retention and orphans").
    const longAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const f of new Bun.Glob("**/ducklake-*.parquet").scanSync({ cwd: join(dir.path, "lake"), absolute: true }))
      utimesSync(f, longAgo, longAgo);
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      expect(await rowsOf(a.app, CALL)).toEqual(atBackup);
    }
    // The replaced catalog lists files the restored appliance deleted as orphans: refused, nothing changed.
    const pre = join(dir.path, readdirSync(dir.path).find((n) => /^catalog\.sqlite\.pre-restore\.[0-9TZ]+$/.test(n))!);
    const before = new Database(catalogPath, { readonly: true });
    const snapNow = before.query<{ s: number }, []>("SELECT max(snapshot_id) AS s FROM ducklake_snapshot").get()!.s;
    before.close();
    const again = await svc(["catalog", "restore", "--config-path", cfg, "--from", pre], dir.path);
    expect(again.stderr).toMatch(
      /^svc: backup .+ lists \d+ data file\(s\) that no longer exist \(first: .+\.parquet\); compaction or retention deleted them after the backup: restore a newer backup or run svc system --rebuild-catalog\n$/,
    );
    expect(again.code).toBe(1);
    const after = new Database(catalogPath, { readonly: true });
    expect(after.query<{ s: number }, []>("SELECT max(snapshot_id) AS s FROM ducklake_snapshot").get()!.s).toBe(
      snapNow,
    );
    after.close();
  });

  test("list shows time, size and snapshot, newest first; backups_kept leaves the newest", async () => {
    await using dir = tempDir("svc-cat-list-");
    const cfg = writeConfig(dir.path, OVERRIDES);
    const made: Array<{ path: string; snapshot: number; out: string }> = [];
    // What killed backups leave: removed by the next backup when their process is gone, never listed.
    const deadTmp = join(dir.path, "catalog.sqlite.bak-20260101T000000000Z.tmp-4194305");
    const liveTmp = join(dir.path, `catalog.sqlite.bak-20260101T000000000Z.tmp-${process.pid}`);
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      for (let i = 0; i < 3; i++) {
        if (i === 2) for (const t of [deadTmp, liveTmp]) writeFileSync(t, "half a copy");
        await ingest(a.app, `b${i}`, 20);
        const b = await svc(["catalog", "backup", "--config-path", cfg], dir.path);
        expect(b.code).toBe(0);
        const m = /^backup (\S+): snapshot (\d+),/.exec(b.stdout)!;
        made.push({ path: m[1]!, snapshot: Number(m[2]), out: b.stdout });
      }
    }
    expect(existsSync(deadTmp)).toBe(false);
    expect(existsSync(liveTmp)).toBe(true);
    // The third backup removed the first (backups_kept 2).
    expect(made[2]!.out).toContain(`removed old backup ${made[0]!.path}\n`);
    expect(existsSync(made[0]!.path)).toBe(false);
    expect(made[1]!.snapshot).toBeGreaterThan(made[0]!.snapshot);
    expect(made[2]!.snapshot).toBeGreaterThan(made[1]!.snapshot);
    const list = await svc(["catalog", "list", "--config-path", cfg], dir.path);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+SIZE\s+SNAPSHOT\s+FILE$/);
    const rows = lines
      .slice(1)
      .map((l) => /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\s+([\d.]+ KiB)\s+(\d+)\s+(\S+)$/.exec(l)!);
    expect(rows.map((r) => [Number(r[3]), r[4]])).toEqual([
      [made[2]!.snapshot, made[2]!.path],
      [made[1]!.snapshot, made[1]!.path],
    ]);
    for (const r of rows) {
      // The time is the one in the name; the size the file's.
      const stamp = /\.bak-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)(\d{3})Z$/.exec(r[4]!)!;
      expect(r[1]).toBe(`${stamp[1]}-${stamp[2]}-${stamp[3]} ${stamp[4]}:${stamp[5]}:${stamp[6]}.${stamp[7]}`);
      expect(r[2]).toBe(`${(Bun.file(r[4]!).size / 1024).toFixed(1)} KiB`);
    }
  });

  test("usage errors exit 2 with one line; a missing catalog or backup exits 1", async () => {
    await using dir = tempDir("svc-cat-usage-");
    const cfg = writeConfig(dir.path);
    const cases: Array<[string[], number, RegExp]> = [
      [["catalog"], 2, /^svc: svc catalog needs a command: backup, list, restore or quarantine/],
      [["catalog", "frob", "--config-path", cfg], 2, /^svc: unknown catalog command "frob"/],
      [["catalog", "list", "--from", "x", "--config-path", cfg], 2, /^svc: --from is for svc catalog restore\n$/],
      [["system", "--config-path", cfg], 2, /^svc: svc system needs --rebuild-catalog/],
      [
        ["system", "--rebuild-cleanup-orphans", "--config-path", cfg],
        2,
        /^svc: --rebuild-cleanup-orphans needs --rebuild-catalog\n$/,
      ],
      [["catalog", "backup", "--config-path", cfg], 1, /^svc: catalog .+catalog\.sqlite does not exist\n$/],
      [["catalog", "restore", "--config-path", cfg], 1, /^svc: no backup of .+catalog\.sqlite to restore/],
      [
        ["catalog", "restore", "--from", "nope", "--config-path", cfg],
        1,
        /^svc: backup nope not found \(svc catalog list shows the backups\)\n$/,
      ],
    ];
    for (const [args, code, err] of cases) {
      const r = await svc(args, dir.path);
      expect(r.stderr, args.join(" ")).toMatch(err);
      expect(r.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      expect(r.code, args.join(" ")).toBe(code);
    }
    const empty = await svc(["catalog", "list", "--config-path", cfg], dir.path);
    expect(empty.stdout).toBe(`no backups of ${join(dir.path, "catalog.sqlite")} (svc catalog backup makes one)\n`);
    expect(empty.code).toBe(0);
  });
});
