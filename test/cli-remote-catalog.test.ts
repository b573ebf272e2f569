/**
 * `svc catalog restore` and `svc system --rebuild-catalog` with an s3:// data_path refuse with exit
 * code 2 and one line saying what to use instead (docs/STORAGE.md "Catalog tools on a remote lake");
 * `svc catalog list` works (the catalog is local); `svc show-config` masks the store's secrets. No
 * store is contacted.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tempDir } from "./harness.ts";

const ROOT = join(import.meta.dir, "..");

async function svc(dir: string, args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  const configPath = join(dir, "svc.json");
  await Bun.write(
    configPath,
    JSON.stringify({
      storage: {
        lakehouse: {
          catalog_path: `${dir}/catalog.sqlite`,
          data_path: "s3://svc-lake/lake/",
          s3: { access_key_id: "AKIA", secret_access_key: "never-shown-9f2" },
          azure: { connection_string: "AccountKey=never-shown-cs1" },
        },
      },
    }),
  );
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), ...args, "--config-path", configPath], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stderr, stdout };
}

describe("catalog tools on a remote data_path", () => {
  test.each([
    [["catalog", "restore"], "svc catalog restore"],
    [["system", "--rebuild-catalog"], "svc system --rebuild-catalog"],
  ])("%p refuses with one line naming versioning", async (args, command) => {
    await using dir = tempDir();
    const r = await svc(dir.path, args);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain(`${command} works on a local data_path`);
    expect(lines[0]).toContain("versioning");
    expect(r.stderr).not.toContain("never-shown-9f2");
  });

  test("svc show-config masks the store secrets", async () => {
    await using dir = tempDir();
    const r = await svc(dir.path, ["show-config"]);
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout) as {
      storage: { lakehouse: { s3: Record<string, string>; azure: Record<string, string> } };
    };
    expect(shown.storage.lakehouse.s3.secret_access_key).toBe("***");
    expect(shown.storage.lakehouse.azure.connection_string).toBe("***");
    expect(r.stdout + r.stderr).not.toContain("never-shown");
  });

  test("svc catalog list works", async () => {
    await using dir = tempDir();
    const r = await svc(dir.path, ["catalog", "list"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("no backups of");
  });
});
