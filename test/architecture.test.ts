/**
 * Dependencies point one way (STYLE.md): core ← config ← hep, sip ← ingest, lake, settings, stream,
 * auth, games ← api, cluster, mcp, loadgen, cli ← main.ts. Folders are entered through index.ts.
 * Native drivers stay behind their owners: @duckdb only in lake, bun:sqlite in lake and settings.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");
const LAYER: Record<string, number> = {
  core: 0,
  config: 1,
  hep: 2,
  sip: 2,
  pcap: 2,
  ingest: 3,
  lake: 3,
  settings: 3,
  stream: 3,
  auth: 3,
  games: 3,
  api: 4,
  cluster: 4,
  mcp: 4,
  loadgen: 4,
  cli: 4,
  "(root)": 5,
};
/** Deliberate exceptions, each with its reason. */
const ALLOWED_EXTRA: Record<string, string[]> = {
  // auth keeps users/tokens in the settings database
  auth: ["settings"],
  // games relays import only core
  games: [],
  // node endpoints (metadata, HEP over HTTP) reuse the API's error mapping and HTTP module
  cluster: ["api"],
};

/**
 * Pure core modules that may be imported by path: the dashboard bundle shares them with the server,
 * and entering through core/index.ts would pull the logger and metrics into the browser.
 */
const DIRECT_ENTRY = new Set(["core/ip.ts", "core/time.ts"]);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return walk(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.ts$/.test(name) ? [p] : [];
  });
}

const folderOf = (file: string) => {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.split("/")[0]! : "(root)";
};

const transpiler = new Bun.Transpiler({ loader: "ts" });
const files = walk(SRC);

describe("architecture", () => {
  test("every src folder has a layer", () => {
    for (const f of files) expect(LAYER[folderOf(f)], `unknown folder for ${relative(SRC, f)}`).toBeNumber();
  });

  test("imports point the allowed way and enter folders through index.ts", () => {
    const problems: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      const imports = transpiler.scanImports(readFileSync(file, "utf8"));
      for (const imp of imports) {
        const spec = imp.path;
        if (spec === "@duckdb/node-api" || spec.startsWith("@duckdb/")) {
          if (from !== "lake") problems.push(`${relative(SRC, file)} imports ${spec}: only src/lake may`);
          continue;
        }
        if (spec === "bun:sqlite") {
          if (from !== "lake" && from !== "settings") problems.push(`${relative(SRC, file)} imports bun:sqlite: only lake and settings may`);
          continue;
        }
        if (!spec.startsWith(".")) continue;
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(SRC)) continue;
        const to = folderOf(target);
        if (to === from) continue;
        if (from === "games" && to !== "core") problems.push(`${relative(SRC, file)} → ${to}: games import only core`);
        const okLayer = (LAYER[to] ?? 99) < (LAYER[from] ?? -1) || (ALLOWED_EXTRA[from] ?? []).includes(to);
        if (!okLayer) problems.push(`${relative(SRC, file)} → src/${to}: wrong direction`);
        const rel = relative(join(SRC, to), target);
        if (rel !== "index.ts" && rel !== "index" && !DIRECT_ENTRY.has(relative(SRC, target))) problems.push(`${relative(SRC, file)} → ${relative(SRC, target)}: enter src/${to} through index.ts`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("the check can fail: a wrong arrow is detected", () => {
    const imports = transpiler.scanImports(`import { x } from "../api/index.ts";`);
    expect(imports[0]?.path).toBe("../api/index.ts");
    expect((LAYER.api ?? 0) < (LAYER.core ?? 0)).toBe(false);
  });
});
