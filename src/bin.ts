/**
 * Entry of the single executable (scripts/build.ts compiles this file). docs/PLATFORM.md "One
 * executable with DuckDB inside": Bun embeds the DuckDB addon (duckdb.node) itself, but the addon
 * links against libduckdb.so, which must exist on disk. So the library travels inside the binary as
 * a file asset, is written once to an exec-allowed cache directory, and is dlopen'ed just before the
 * lake first loads @duckdb (src/lake/duckdb.ts, not at start: `svc serve` answers its logins before
 * the lake opens, docs/ARCHITECTURE.md "Start-up"): the addon's NEEDED entry then matches the
 * already-loaded soname, with no LD_LIBRARY_PATH and no sidecar file. From the source tree
 * node_modules serves it and nothing runs.
 */
import { dlopen, FFIType } from "bun:ffi";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { loadConfig } from "./config/index.ts";
// A file asset, not a driver import (the lake alone talks to DuckDB): a relative path keeps the
// architecture test's @duckdb rule about code. The bundler names the asset by content hash.
import embeddedLibduckdb from "../node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so" with { type: "file" };

/** runtime.cache_dir (env SVC_RUNTIME_CACHE_DIR or the --config-path file), else the XDG cache. */
function cacheDir(argv: readonly string[]): string {
  const i = argv.findIndex((a) => a === "--config-path" || a.startsWith("--config-path="));
  const arg = argv[i];
  const path = arg === undefined ? undefined : arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[i + 1];
  let configured = "";
  try {
    configured = loadConfig({ path }).config.runtime.cache_dir;
  } catch {
    // main() reports the bad configuration with every key named; here only the directory matters.
    configured = process.env.SVC_RUNTIME_CACHE_DIR ?? "";
  }
  return configured || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "svc");
}

/** Writes the embedded library under a content-versioned folder (tmp + rename: concurrent starts and upgrades never see half a file). */
async function extractLibduckdb(dir: string): Promise<string> {
  const source = Bun.file(embeddedLibduckdb);
  const target = join(dir, basename(embeddedLibduckdb, ".so"), "libduckdb.so");
  if (existsSync(target) && statSync(target).size === source.size) return target;
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    mkdirSync(join(target, ".."), { recursive: true, mode: 0o755 });
    await Bun.write(tmp, source);
    renameSync(tmp, target);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // Its folder may not exist either (Bun then throws EFAULT even with force): the cause below matters.
    }
    throw new Error(
      `cannot extract libduckdb.so to ${dir} (${(e as Error).message}); set SVC_RUNTIME_CACHE_DIR to a writable, exec-allowed directory`,
    );
  }
  return target;
}

/** Extracts and maps the embedded library; the lake calls it once, before the addon loads. */
async function loadLibduckdb(argv: readonly string[]): Promise<void> {
  const path = await extractLibduckdb(cacheDir(argv));
  try {
    // One declared symbol is enough to map the library; the handle stays open for the process lifetime.
    dlopen(path, { duckdb_library_version: { args: [], returns: FFIType.cstring } });
  } catch (e) {
    throw new Error(
      `cannot load ${path} (${(e as Error).message}); the cache directory must allow exec (no noexec mount)`,
    );
  }
}

async function run(): Promise<number> {
  // Invoked through the link named loadgen (appliance/install.sh): the same as `svc loadgen …`.
  const argv = basename(process.argv0) === "loadgen" ? ["loadgen", ...process.argv.slice(2)] : process.argv.slice(2);
  const { main } = await import("./main.ts");
  return await main(argv, embeddedLibduckdb.startsWith("/$bunfs/") ? { beforeDuckDb: () => loadLibduckdb(argv) } : {});
}

run().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`svc: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
