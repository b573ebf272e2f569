/**
 * `storage.lakehouse.catalog_type: postgres` when it cannot work (docs/DUCKLAKE.md "PostgreSQL
 * catalog"): a wrong password, a closed port or a catalog_path that is no postgres:// URL stop the
 * start with CONFIG_INVALID naming storage.lakehouse.catalog_path, never the password (`svc serve`
 * exits 2 with one line). The admin tools: catalog-admin-pg.test.ts.
 */
import { afterAll, expect } from "bun:test";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AppError, errorMessage } from "../../src/core/index.ts";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { isolatedServeEnv } from "../e2e/serve-env.ts";
import { peerTest, tempDir } from "../harness.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { freeTcpPort } from "../peers/slapd.ts";

const ROOT = join(import.meta.dir, "../..");
const T = 60_000;
let server: Promise<Postgres> | undefined;
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

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

async function startError(dir: string, url: string): Promise<AppError> {
  try {
    await using _a = await startTestAppliance(dir, lakeOf(url, dir));
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("the appliance started");
}

peerTest(
  "a wrong password, a closed port or no URL: the start fails naming storage.lakehouse.catalog_path, no password",
  [postgresPeer],
  async () => {
    await using dir = tempDir();
    server ??= startPostgres();
    const pg = await server;
    const wrong = pg.url.replace(`:${pg.password}@`, ":Wr0ngSecret@");
    // The isolated environment names a SQLite catalog: the file's URL is the point here.
    const { SVC_STORAGE_LAKEHOUSE_CATALOG_PATH: _c, ...serveEnv } = isolatedServeEnv(dir.path);
    // svc serve itself: exit code 2 and one line, as other configuration errors.
    const configPath = join(dir.path, "svc.json");
    await Bun.write(configPath, JSON.stringify(testConfigJson(dir.path, lakeOf(wrong, dir.path))));
    const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", configPath], {
      cwd: dir.path,
      env: { PATH: process.env.PATH ?? "", HOME: dir.path, ...serveEnv, SVC_LOG_FORMAT: "json" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    // A serve that starts instead of failing is stopped, so the test fails rather than hangs.
    const guard = setTimeout(() => proc.kill(), 30_000);
    const stderr = await new Response(proc.stderr).text();
    clearTimeout(guard);
    const lines = stderr.split("\n").filter((l) => l.startsWith("svc: "));
    expect({ code: await proc.exited, lines: lines.length }).toEqual({ code: 2, lines: 1 });
    expect(lines[0]).toContain("storage.lakehouse.catalog_path");
    expect(lines[0]).toContain("***");
    expect(stderr).not.toContain("Wr0ngSecret");

    const closed = `postgres://svc:Cl0sedSecret@127.0.0.1:${freeTcpPort()}/lake`;
    for (const [url, secret] of [
      [closed, "Cl0sedSecret"],
      ["/var/lib/svc/catalog.sqlite", "catalog.sqlite"],
      ["mysql://svc:MySecret@127.0.0.1/lake", "MySecret"],
    ] as const) {
      const e = await startError(join(dir.path, String(url.length)), url);
      expect({ url: url.replace(secret, ""), code: e.code }).toEqual({
        url: url.replace(secret, ""),
        code: "CONFIG_INVALID",
      });
      expect(e.message).toContain("storage.lakehouse.catalog_path");
      if (secret !== "catalog.sqlite") expect(errorMessage(e)).not.toContain(secret);
      expect(existsSync(dirname(resolve(url)))).toBe(url.startsWith("/var/lib/svc") && existsSync("/var/lib/svc"));
    }
  },
  T,
);
