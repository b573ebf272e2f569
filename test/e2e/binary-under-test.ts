/**
 * The single executable the e2e tests run: SVC_TEST_BINARY when set (.ci/run sets it to the
 * `make build` of a clean clone), otherwise one `make build` of this tree into a temp dir, shared
 * by every test file of the run (bun test runs them in one process) and removed at exit.
 * `make build` is the README's path: it builds the dashboard and embeds it (scripts/build.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");

export interface BinaryUnderTest {
  path: string;
  /** The git revision built in (undefined for SVC_TEST_BINARY: built elsewhere). */
  revision?: string;
}

let pending: Promise<BinaryUnderTest> | undefined;

async function build(): Promise<BinaryUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), "svc-e2e-build-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "bin", "svc");
  const rev = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
  const revision = rev.success ? rev.stdout.toString().trim() : "unknown";
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  // Whatever the build's own check runs, DuckDB unpacks into this cache, never ~/.cache.
  env.SVC_RUNTIME_CACHE_DIR = join(dir, "cache");
  const proc = Bun.spawn(["make", "--no-print-directory", "build", `BIN=${path}`], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`make build failed (exit ${code}):\n${out}\n${err}`);
  return { path, revision };
}

/** Builds once per test run (or takes SVC_TEST_BINARY). */
export function binaryUnderTest(): Promise<BinaryUnderTest> {
  if (process.env.SVC_TEST_BINARY) return Promise.resolve({ path: resolve(process.env.SVC_TEST_BINARY) });
  pending ??= build();
  return pending;
}
