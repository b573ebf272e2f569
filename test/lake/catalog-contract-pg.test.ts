/**
 * The catalog port's contract (catalog-contract.ts) on PgCatalog (src/lake/catalog-pg), each run on
 * a fresh database of one real PostgreSQL (test/peers/postgres.ts, initdb in a temp dir).
 */
import { afterAll } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { catalogContract } from "./catalog-contract.ts";

let server: Promise<Postgres> | undefined;
let databases = 0;
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

catalogContract("postgres", async () => {
  server ??= startPostgres();
  const url = await (await server).createDatabase(`contract${++databases}`);
  const dir = mkdtempSync(join(tmpdir(), "svc-contract-pg-"));
  const dataPath = join(dir, "lake");
  mkdirSync(dataPath);
  const catalog = await PgCatalog.open({ url, dataPath });
  return {
    catalog,
    dataPath,
    async close() {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}, [postgresPeer]);
