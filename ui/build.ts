/**
 * `make ui` / `bun ui/build.ts [--outdir dir] [--no-minify]`: the dashboard (Preact + htm, no JSX
 * step) bundled by Bun.build into ui-dist/:
 *   index.html            the page; `%SVC_API_BASE%` is filled in by the server (src/api/ui)
 *   assets/app.js         one browser bundle (Preact, htm and the app), ES2020, minified
 *   assets/app.css        the stylesheet
 *   assets/favicon.svg
 * Asset URLs carry `?v=<content hash>` so they can be cached for a long time. Nothing is loaded
 * from the internet at run time (system fonts only): the appliance works offline.
 * scripts/build.ts embeds ui-dist/ into the single executable when it exists.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const UI = import.meta.dir;
export const DEFAULT_OUTDIR = resolve(UI, "..", "ui-dist");

export interface UiBuildResult {
  outdir: string;
  files: Array<{ path: string; bytes: number }>;
  ms: number;
}

const hash8 = (data: string | Uint8Array) => Bun.hash(data).toString(16).padStart(16, "0").slice(0, 8);

/** Builds the dashboard into `outdir` (its files replaced, nothing else kept). Throws with Bun's messages on failure. */
export async function buildUi(opts: { outdir?: string; minify?: boolean } = {}): Promise<UiBuildResult> {
  const started = performance.now();
  const outdir = resolve(opts.outdir ?? DEFAULT_OUTDIR);
  const result = await Bun.build({
    entrypoints: [join(UI, "src", "main.ts")],
    target: "browser",
    format: "esm",
    minify: opts.minify ?? true,
    sourcemap: "none",
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
  });
  if (!result.success) throw new Error(`ui build failed:\n${result.logs.map((l) => String(l)).join("\n")}`);
  const js = result.outputs.find((o) => o.kind === "entry-point");
  if (!js) throw new Error("ui build produced no entry point");
  const jsText = await js.text();
  const css = readFileSync(join(UI, "src", "styles.css"), "utf8");
  const favicon = readFileSync(join(UI, "favicon.svg"), "utf8");
  const html = readFileSync(join(UI, "index.html"), "utf8")
    .replace("%APP_JS%", `/assets/app.js?v=${hash8(jsText)}`)
    .replace("%APP_CSS%", `/assets/app.css?v=${hash8(css)}`);

  mkdirSync(join(outdir, "assets"), { recursive: true });
  const files: Array<[string, string]> = [
    ["index.html", html],
    ["assets/app.js", jsText],
    ["assets/app.css", css],
    ["assets/favicon.svg", favicon],
  ];
  // Each file is replaced by a rename, never deleted first: a server reading ui-dist meanwhile
  // (the tests run two files at once, and many e2e files build the dashboard) gets the old file or
  // the new one, not a 404 that leaves the page blank.
  for (const [p, text] of files) {
    const tmp = join(outdir, `${p}.${process.pid}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(outdir, p));
  }
  // Whatever else an earlier build left goes (another build's .tmp files are still being written).
  const keep = new Set(files.map(([p]) => p));
  for (const dir of ["", "assets"]) {
    for (const e of readdirSync(join(outdir, dir), { withFileTypes: true })) {
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (!keep.has(p) && p !== "assets" && !e.name.endsWith(".tmp")) rmSync(join(outdir, p), { recursive: true, force: true });
    }
  }
  return { outdir, files: files.map(([path, text]) => ({ path, bytes: Buffer.byteLength(text) })), ms: performance.now() - started };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { outdir: { type: "string" }, "no-minify": { type: "boolean", default: false } },
  });
  const r = await buildUi({ ...(values.outdir ? { outdir: values.outdir } : {}), minify: !values["no-minify"] });
  const total = r.files.reduce((s, f) => s + f.bytes, 0);
  console.log(`ui: ${r.outdir} ${r.files.map((f) => `${f.path} ${(f.bytes / 1024).toFixed(1)} KiB`).join(", ")}; ${(total / 1024).toFixed(1)} KiB in ${r.ms.toFixed(0)} ms`);
}
