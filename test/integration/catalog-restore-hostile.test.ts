/**
 * `svc catalog restore` does not trust the backup it is given (docs/OPERATIONS.md "Restore"): a
 * SQLite file that is not exactly a catalog of ours is refused with one line naming what is wrong,
 * exit 1, and nothing on disk changes. Each hostile backup is a genuine backup altered with
 * bun:sqlite: a trigger that would empty the lake at the next commit, a view in place of a catalog
 * table, data or scheduled-for-deletion paths outside the data path (absolute, `..`, through a
 * symbolic link), reserved or path-like names, extra tables, indexes and columns. The genuine
 * backup still restores.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, type TempDir } from "../harness.ts";
import { CALL, count, ingest, svc, writeConfig } from "./catalog-tools-harness.ts";

const OVERRIDES = { storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000 } } };

let dir: TempDir;
let cfg = "";
let good = "";
let dataPath = "";

/** Every file under the test directory with its size and (for the catalog) its bytes: what "nothing changed" compares. */
function diskState(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
    // SQLite's shared-memory index and an empty write-ahead log come and go with whoever last
    // opened the catalog; they hold no data (a WAL with frames would, and is compared).
    else if (p.endsWith("-shm") || (p.endsWith("-wal") && st.size === 0)) return;
    else
      out[relative(dir.path, p)] = st.isSymbolicLink()
        ? "link"
        : `${st.size}:${Bun.hash(readFileSync(p)).toString(16)}`;
  };
  walk(dir.path);
  return out;
}

/** A copy of the genuine backup altered by `alter`. */
function hostile(name: string, alter: (db: Database) => void): string {
  const path = join(dir.path, "hostile", `${name}.sqlite`);
  mkdirSync(join(dir.path, "hostile"), { recursive: true });
  copyFileSync(good, path);
  const db = new Database(path);
  try {
    alter(db);
  } finally {
    db.close();
  }
  return path;
}

const firstFile = "(SELECT min(data_file_id) FROM ducklake_data_file)";

beforeAll(async () => {
  dir = tempDir("svc-restore-hostile-");
  cfg = writeConfig(dir.path, OVERRIDES);
  dataPath = join(dir.path, "lake");
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "good", 200);
  }
  const b = await svc(["catalog", "backup", "--config-path", cfg], dir.path);
  expect(b.code).toBe(0);
  good = /^backup (\S+):/.exec(b.stdout)![1]!;
}, 120_000);

afterAll(async () => {
  await dir[Symbol.asyncDispose]();
});

/** Restores `path` and expects the one-line refusal `problem`, exit 1, and the disk as it was. */
async function expectRefused(path: string, problem: RegExp): Promise<void> {
  const before = diskState();
  const r = await svc(["catalog", "restore", "--config-path", cfg, "--from", path], dir.path);
  expect(r.stdout).toBe("");
  expect(r.stderr).toMatch(
    new RegExp(
      `^svc: backup ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} refused, nothing changed: ${problem.source}`,
    ),
  );
  expect(r.stderr.endsWith("\n") && r.stderr.trimEnd().split("\n").length === 1, r.stderr).toBe(true);
  expect(r.code).toBe(1);
  expect(diskState()).toEqual(before);
}

describe("svc catalog restore refuses a backup that is not exactly a catalog of ours", () => {
  test("a trigger (it would empty the lake at the next commit)", async () => {
    const path = hostile("trigger", (db) =>
      db.run("CREATE TRIGGER wipe AFTER INSERT ON ducklake_snapshot BEGIN DELETE FROM ducklake_data_file; END"),
    );
    await expectRefused(
      path,
      /it holds trigger "wipe" on "ducklake_snapshot" \(a catalog has none; it would run inside the appliance's commits\)\n$/,
    );
  });

  test("a view in place of a catalog table", async () => {
    const path = hostile("view", (db) => {
      db.run("ALTER TABLE ducklake_data_file RENAME TO kept_files");
      db.run("CREATE VIEW ducklake_data_file AS SELECT * FROM kept_files WHERE 0");
    });
    await expectRefused(
      path,
      /"ducklake_data_file" is a view, not DuckLake's table \(a catalog has none\) \(and \d+ more problem\(s\)\)\n$/,
    );
  });

  test("an extra table, an extra index, an extra column", async () => {
    await expectRefused(
      hostile("table", (db) => db.run("CREATE TABLE notes(x TEXT)")),
      /it holds table "notes", which is neither DuckLake's nor svc's\n$/,
    );
    await expectRefused(
      hostile("index", (db) => db.run("CREATE INDEX by_path ON ducklake_data_file(path)")),
      /it holds index "by_path", which is neither DuckLake's nor svc's\n$/,
    );
    await expectRefused(
      hostile("column", (db) => db.run("ALTER TABLE ducklake_tag ADD COLUMN extra TEXT")),
      /table "ducklake_tag" is not defined as DuckLake 1\.0 defines it: extra column "extra TEXT"\n$/,
    );
  });

  test("a data file outside the data path: absolute, with '..', through a symbolic link", async () => {
    await expectRefused(
      hostile("passwd", (db) =>
        db.run(
          `UPDATE ducklake_data_file SET path = '/etc/passwd', path_is_relative = 0 WHERE data_file_id = ${firstFile}`,
        ),
      ),
      /data file \d+ of table \d+ resolves to "\/etc\/passwd", outside the data path .+\/lake\/\n$/,
    );
    await expectRefused(
      hostile("dotdot", (db) =>
        db.run(`UPDATE ducklake_data_file SET path = '../../../../../../etc/passwd' WHERE data_file_id = ${firstFile}`),
      ),
      /data file \d+ of table \d+ holds a "\.\." segment \(".+\.\.\/etc\/passwd"\)\n$/,
    );
    // A link inside the data path to a copy of a genuine file outside it.
    const outside = join(dir.path, "outside");
    mkdirSync(outside, { recursive: true });
    const db = new Database(good, { readonly: true });
    const f = db
      .query<{ path: string; t: string }, []>(
        `SELECT f.path, t.path AS t FROM ducklake_data_file f JOIN ducklake_table t USING (table_id) WHERE data_file_id = ${firstFile}`,
      )
      .get()!;
    db.close();
    const genuine = join(dataPath, "main", f.t, f.path);
    copyFileSync(genuine, join(outside, "copy.parquet"));
    symlinkSync(outside, join(dataPath, "main", f.t, "elsewhere"));
    await expectRefused(
      hostile("link", (d) =>
        d.run(`UPDATE ducklake_data_file SET path = 'elsewhere/copy.parquet' WHERE data_file_id = ${firstFile}`),
      ),
      /data file \d+ of table \d+ leads through a symbolic link to ".+\/outside\/copy\.parquet", outside the data path .+\n$/,
    );
    // A table directory outside the data path.
    await expectRefused(
      hostile("tabledir", (d) => d.run("UPDATE ducklake_table SET path = '/tmp/', path_is_relative = 0")),
      /the directory of table \d+ resolves to "\/tmp", outside the data path .+\n$/,
    );
  });

  test("a file scheduled for deletion outside the data path (expiry would delete it)", async () => {
    await expectRefused(
      hostile("scheduled", (db) =>
        db.run(
          "INSERT INTO ducklake_files_scheduled_for_deletion VALUES (99999, '/etc/passwd', 0, '2026-01-01 00:00:00+00')",
        ),
      ),
      /file 99999 scheduled for deletion resolves to "\/etc\/passwd", outside the data path .+\n$/,
    );
  });

  test("reserved and hostile schema and table names", async () => {
    await expectRefused(
      hostile("reserved", (db) =>
        db.run("UPDATE ducklake_schema SET schema_name = 'information_schema' WHERE schema_name = 'main'"),
      ),
      /schema: schema name "information_schema" is reserved \(DuckDB's system schema\); use another database name\n$/,
    );
    await expectRefused(
      hostile("svc_lake", (db) =>
        db.run("UPDATE ducklake_schema SET schema_name = 'SVC_LAKE' WHERE schema_name = 'main'"),
      ),
      /schema: schema name "SVC_LAKE" is reserved \(the lake's own database\)/,
    );
    await expectRefused(
      hostile("slash", (db) =>
        db.run(
          "UPDATE ducklake_table SET table_name = 'a/../b' WHERE table_id = (SELECT min(table_id) FROM ducklake_table)",
        ),
      ),
      /table "main\.a\/\.\.\/b": name "a\/\.\.\/b" holds a path character\n$/,
    );
    await expectRefused(
      hostile("control", (db) =>
        db.run(
          "UPDATE ducklake_table SET table_name = 'x' || char(10) || 'y' WHERE table_id = (SELECT min(table_id) FROM ducklake_table)",
        ),
      ),
      /table "main\.x\\ny": name "x\\ny" holds a control character\n$/,
    );
  });

  test("a listing of inlined-data tables (it names tables the appliance would query)", async () => {
    await expectRefused(
      hostile("inlined", (db) => db.run("INSERT INTO ducklake_inlined_data_tables VALUES (1, 'sqlite_master', 0)")),
      /ducklake_inlined_data_tables lists 1 table\(s\) of inlined rows \(svc never inlines rows: data_inlining_row_limit 0\)\n$/,
    );
  });

  test("a file that is not a SQLite database", async () => {
    const junk = join(dir.path, "hostile", "junk.sqlite");
    await Bun.write(junk, "not a database at all, just text that is long enough to look like a header".repeat(10));
    await expectRefused(junk, /(not a SQLite database|its schema cannot be read) \(.+\)\n$/);
  });

  test("the genuine backup restores; its 200 rows are served", async () => {
    const r = await svc(["catalog", "restore", "--config-path", cfg, "--from", good], dir.path);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    expect(await count(a.app, CALL)).toBe(200);
  });
});

test("a restored trigger can no longer empty the lake: refused before it reaches the catalog", async () => {
  // What the trigger would do, shown on a scratch copy: the next commit leaves no live file.
  const scratch = hostile("demo", (db) =>
    db.run("CREATE TRIGGER wipe AFTER INSERT ON ducklake_snapshot BEGIN DELETE FROM ducklake_data_file; END"),
  );
  const db = new Database(scratch);
  db.run(
    "INSERT INTO ducklake_snapshot SELECT snapshot_id + 1, snapshot_time, schema_version, next_catalog_id, next_file_id FROM ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1",
  );
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM ducklake_data_file").get()!.n).toBe(0);
  db.close();
  await expectRefused(
    hostile("trigger2", (d) =>
      d.run("CREATE TRIGGER wipe2 AFTER INSERT ON ducklake_data_file BEGIN DELETE FROM ducklake_data_file; END"),
    ),
    /it holds trigger "wipe2"/,
  );
});
