/**
 * Dependencies point one way (docs/STYLE.md "Layers"): core ← config ← hep, sip ← ingest, lake, settings, stream,
 * auth, games ← api, cluster, mcp, loadgen, cli ← main.ts. Folders are entered through index.ts.
 * Native drivers stay behind their owners: @duckdb only in lake, bun:sqlite in lake and settings.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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
  // the natural-language engine reads through the search and SQL services (docs/MCP.md)
  mcp: ["api"],
};

/**
 * Pure core modules that may be imported by path: the dashboard bundle shares them with the server,
 * and entering through core/index.ts would pull the logger and metrics into the browser.
 */
const DIRECT_ENTRY = new Set(["core/ip.ts", "core/time.ts", "core/protocols.ts"]);

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
          if (from !== "lake" && from !== "settings")
            problems.push(`${relative(SRC, file)} imports bun:sqlite: only lake and settings may`);
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
        if (rel !== "index.ts" && rel !== "index" && !DIRECT_ENTRY.has(relative(SRC, target)))
          problems.push(`${relative(SRC, file)} → ${relative(SRC, target)}: enter src/${to} through index.ts`);
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

/** Relative imports of a source file, type-only ones included (a type circle is still a circle). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)"/gms)) {
    let t = resolve(dirname(file), m[1]!);
    if (!existsSync(t) && existsSync(`${t}.ts`)) t = `${t}.ts`;
    if (existsSync(t) && statSync(t).isDirectory()) t = join(t, "index.ts");
    out.push(t);
  }
  return out;
}

/** Strongly connected groups of more than one file (Tarjan): each is an import circle. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) circles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe("import circles", () => {
  const ROOT = resolve(import.meta.dir, "..");
  test("no two files of src/ or ui/src/ import each other, directly or around a circle (type imports included)", () => {
    const all = [...files, ...walk(join(ROOT, "ui/src"))];
    const graph = new Map(all.map((f) => [f, relativeImports(f)]));
    expect(importCircles(graph).map((c) => c.map((f) => relative(ROOT, f)))).toEqual([]);
  });

  test("the check can fail: a circle of three is found", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(importCircles(g)).toEqual([["a", "b", "c"]]);
  });
});

describe("file size", () => {
  const ROOT = resolve(import.meta.dir, "..");
  const MARK = "Over 400 lines";
  test(`no source file over 400 lines without a reason in its header ("${MARK} …" in its first 60 lines)`, () => {
    const all = [...files, ...walk(join(ROOT, "ui/src")), ...walk(join(ROOT, "scripts")), ...walk(join(ROOT, "bench"))];
    const long = all
      .map((f) => ({ f, lines: readFileSync(f, "utf8").split("\n") }))
      .filter(({ lines }) => lines.length > 401)
      .filter(({ lines }) => !lines.slice(0, 60).some((l) => l.includes(MARK)))
      .map(({ f, lines }) => `${relative(ROOT, f)}: ${lines.length} lines`);
    expect(long).toEqual([]);
  });
});
