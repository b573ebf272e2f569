/**
 * `npm run build` / `make build`: one executable `dist/svc` with DuckDB inside (PLATFORM-NOTES
 * "One executable with DuckDB inside"). Usage: bun scripts/build.ts [--outfile f] [--no-sourcemap]
 * [--bytecode] [--skip-check]. Never strip the result: that silently drops the embedded code.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "..");

const { values: opts } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    outfile: { type: "string", default: join(ROOT, "dist", "svc") },
    "no-sourcemap": { type: "boolean", default: false },
    bytecode: { type: "boolean", default: false },
    "skip-check": { type: "boolean", default: false },
  },
});

function gitRevision(): string {
  const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
  const rev = r.success ? r.stdout.toString().trim() : "";
  return rev || "unknown";
}

const version = String((await Bun.file(join(ROOT, "package.json")).json()).version);
const revision = gitRevision();
const outfile = resolve(opts.outfile);
mkdirSync(dirname(outfile), { recursive: true });

// @duckdb/node-bindings requires every platform package by name; only linux-x64 (glibc) is
// installed and embedded, the others must stay unresolved or the bundler fails.
const otherPlatforms = [
  "@duckdb/node-bindings-darwin-*",
  "@duckdb/node-bindings-win32-*",
  "@duckdb/node-bindings-linux-arm64*",
  "@duckdb/node-bindings-linux-x64-musl",
];

const cmd = [
  process.execPath,
  "build",
  "--compile",
  "--minify",
  // Readable function names in logged stack traces for a few KiB.
  "--keep-names",
  `--sourcemap=${opts["no-sourcemap"] ? "none" : "linked"}`,
  // An appliance must not change behaviour with the directory it starts in.
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  `--define=SVC_VERSION=${JSON.stringify(version)}`,
  `--define=SVC_GIT_REVISION=${JSON.stringify(revision)}`,
  ...otherPlatforms.map((p) => `--external=${p}`),
  // bin.ts awaits at top level through import(); --bytecode defaults to cjs, which cannot.
  ...(opts.bytecode ? ["--bytecode", "--format=esm"] : []),
  // The dashboard (ui/) is built into ui-dist/ by `make ui`; absent until then, and that is fine.
  ...(existsSync(join(ROOT, "ui-dist")) ? ["--asset=./ui-dist"] : []),
  "src/bin.ts",
  // The HEP ingest thread (src/ingest-thread.ts starts it with new Worker): its own entry point.
  "src/ingest-worker.ts",
  `--outfile=${outfile}`,
];

const started = performance.now();
const build = Bun.spawnSync(cmd, { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
if (!build.success) {
  console.error(`build: bun build --compile failed (exit ${build.exitCode})`);
  process.exit(1);
}
const seconds = (performance.now() - started) / 1000;
// The source maps are embedded in the executable; the copies written beside it (one per entry
// point) are not needed to run.
rmSync(`${outfile}.map`, { force: true });
rmSync(join(dirname(outfile), "ingest-worker.js.map"), { force: true });
const mib = statSync(outfile).size / 2 ** 20;
console.log(`build: ${outfile} ${mib.toFixed(1)} MiB in ${seconds.toFixed(1)} s (svc ${version}, ${revision})`);

if (!opts["skip-check"]) {
  // Run it from an unrelated directory: nothing may depend on the source tree or the cwd.
  const elsewhere = mkdtempSync(join(tmpdir(), "svc-build-check-"));
  try {
    const check = Bun.spawnSync([outfile, "version"], { cwd: elsewhere, stdout: "pipe", stderr: "pipe" });
    const out = check.stdout.toString().trim();
    if (!check.success || !out.includes(version) || !out.includes(revision)) {
      console.error(`build: check failed: \`${outfile} version\` exit ${check.exitCode}\n${out}\n${check.stderr.toString()}`);
      process.exit(1);
    }
    console.log(`build: check ok: ${out}`);
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
}
