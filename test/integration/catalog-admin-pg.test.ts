/**
 * The file-based catalog tools with `storage.lakehouse.catalog_type: postgres` (docs/DUCKLAKE.md
 * "PostgreSQL catalog", "Admin tools"): `svc catalog backup|list|restore` and `svc system
 * --rebuild-catalog` refuse with what to use instead (pg_dump, pg_restore, point-in-time recovery)
 * and touch nothing. No server is needed: they refuse before connecting.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { runCatalog } from "../../src/cli/catalog.ts";
import { type CliIo, processIo } from "../../src/cli/io.ts";
import { runSystem } from "../../src/cli/system.ts";
import { AppError, errorMessage } from "../../src/core/index.ts";
import { tempDir } from "../harness.ts";

function lakeOf(url: string, dir: string) {
  return {
    storage: {
      lakehouse: {
        catalog_type: "postgres",
        catalog_path: url,
        data_path: join(dir, "lake/"),
        state_path: join(dir, "state"),
      },
    },
  };
}

test("svc catalog backup|list|restore and svc system --rebuild-catalog refuse with a PostgreSQL catalog", async () => {
  await using dir = tempDir();
  const configPath = join(dir.path, "svc.json");
  await Bun.write(configPath, JSON.stringify(lakeOf("postgres://svc:s3cret@127.0.0.1:1/lake", dir.path)));
  const io: CliIo = { ...processIo(), out: async () => undefined, err: async () => undefined };
  const cases: Array<[() => Promise<number>, string]> = [
    [() => runCatalog(["backup", "--config-path", configPath], io), "pg_dump"],
    [() => runCatalog(["list", "--config-path", configPath], io), "pg_dump"],
    [() => runCatalog(["restore", "--config-path", configPath], io), "pg_restore"],
    [() => runSystem(["--rebuild-catalog", "--config-path", configPath], io), "pg_restore"],
  ];
  for (const [run, hint] of cases) {
    const e = await run().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(AppError);
    expect(errorMessage(e)).toContain(hint);
    expect(errorMessage(e)).not.toContain("s3cret");
  }
  // Nothing was made: no backup, no catalog, no data.
  expect(await Bun.file(join(dir.path, "state")).exists()).toBe(false);
});
