/**
 * `npm run build` / `make build`: one executable `dist/svc` with DuckDB and the dashboard inside
 * (docs/INSTALL.md "Build the executable"). Usage: bun scripts/build.ts [--outfile f]
 * [--no-sourcemap] [--no-bytecode] [--skip-check]. Compiled to bytecode unless --no-bytecode: the
 * executable then starts without parsing its JavaScript (docs/BENCHMARKS.md "Start-up"). The
 * dashboard is built first (ui/build.ts into ui-dist/) and embedded every time: a failed UI build
 * fails the build, so no executable ships without it. Never strip the result: that silently drops
 * the embedded code (docs/PLATFORM.md "One executable with DuckDB inside").
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildUi } from "../ui/build.ts";

const ROOT = resolve(import.meta.dir, "..");

const { values: opts } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    outfile: { type: "string", default: join(ROOT, "dist", "svc") },
    "no-sourcemap": { type: "boolean", default: false },
    "no-bytecode": { type: "boolean", default: false },
    "skip-check": { type: "boolean", default: false },
  },
});

function gitRevision(): string {
  const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
  const rev = r.success ? r.stdout.toString().trim() : "";
  return rev || "unknown";
}

// The dashboard first, into ui-dist/ at the root: `--asset=./ui-dist` below embeds it relative to
// this working directory, which is where src/api/ui looks for it inside the executable.
let ui;
try {
  ui = await buildUi({ outdir: join(ROOT, "ui-dist") });
} catch (e) {
  // Bun.build throws an AggregateError whose `errors` are the bundler's messages with file and line.
  const where = (x: unknown) => {
    const p = (x as { position?: { file: string; line: number; column: number } | null }).position;
    return p ? `${p.file}:${p.line}:${p.column}: ${(x as Error).message}` : String(x);
  };
  const details = e instanceof AggregateError ? e.errors.map(where) : [(e as Error).message];
  console.error(`build: the dashboard did not build, so no executable is made:\n${details.join("\n")}`);
  process.exit(1);
}
for (const f of ["index.html", "assets/app.js", "assets/app.css"]) {
  if (!existsSync(join(ui.outdir, f))) {
    console.error(`build: ui/build.ts wrote no ${f} into ${ui.outdir}`);
    process.exit(1);
  }
}
console.log(
  `build: dashboard ${ui.outdir} (${ui.files.length} files, ${(ui.files.reduce((n, f) => n + f.bytes, 0) / 1024).toFixed(0)} KiB)`,
);

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
  // Bytecode: the executable skips parsing its JavaScript at every start (docs/PLATFORM.md "One
  // executable with DuckDB inside"). bin.ts awaits at top level through import(); --bytecode
  // defaults to cjs, which cannot, hence esm.
  ...(opts["no-bytecode"] ? [] : ["--bytecode", "--format=esm"]),
  // The dashboard built above: files under /$bunfs/root/ui-dist/ in the executable.
  "--asset=./ui-dist",
  "src/bin.ts",
  // The HEP ingest thread (src/ingest/thread/host.ts starts it with new Worker): its own entry
  // point, at /$bunfs/root/ingest/thread/worker.js (its path under src/, the entries' common folder).
  "src/ingest/thread/worker.ts",
  // Compaction's page cutter (src/core/parquet/repage.ts repageInWorker), the same way.
  "src/core/parquet/repage-worker.ts",
  // The row fetch's second thread (src/lake/page-helper.ts), the same way.
  "src/lake/page-worker.ts",
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
// point, the worker's named after its file only) are not needed to run.
rmSync(`${outfile}.map`, { force: true });
rmSync(join(dirname(outfile), "worker.js.map"), { force: true });
rmSync(join(dirname(outfile), "repage-worker.js.map"), { force: true });
rmSync(join(dirname(outfile), "page-worker.js.map"), { force: true });
const mib = statSync(outfile).size / 2 ** 20;
console.log(`build: ${outfile} ${mib.toFixed(1)} MiB in ${seconds.toFixed(1)} s (svc ${version}, ${revision})`);

if (!opts["skip-check"]) {
  // Run it from an unrelated directory: nothing may depend on the source tree or the cwd.
  const elsewhere = mkdtempSync(join(tmpdir(), "svc-build-check-"));
  try {
    const check = Bun.spawnSync([outfile, "version"], { cwd: elsewhere, stdout: "pipe", stderr: "pipe" });
    const out = check.stdout.toString().trim();
    if (!check.success || !out.includes(version) || !out.includes(revision)) {
      console.error(
        `build: check failed: \`${outfile} version\` exit ${check.exitCode}\n${out}\n${check.stderr.toString()}`,
      );
      process.exit(1);
    }
    console.log(`build: check ok: ${out}`);
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
}
