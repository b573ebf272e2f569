/** The catalog port's contract (catalog-contract.ts) on the SQLite catalog (src/lake/catalog-adapter.ts). */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import { catalogContract } from "./catalog-contract.ts";

catalogContract("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-contract-"));
  const dataPath = join(dir, "lake");
  mkdirSync(dataPath);
  const catalog = openLakeCatalog({ path: join(dir, "catalog.sqlite"), dataPath });
  return {
    catalog,
    dataPath,
    async close() {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
