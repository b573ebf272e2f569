/**
 * Rebuilding the dashboard never leaves a moment without its files (ui/build.ts): many e2e files
 * build ui-dist while another file's browser loads it (docs/STYLE.md "Tests": two files at once),
 * and a page whose app.js was missing for a moment stayed blank.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildUi } from "../../ui/build.ts";
import { tempDir } from "../harness.ts";

const BUILD = resolve(import.meta.dir, "../../ui/build.ts");

test("a reader polling ui-dist while it is rebuilt 20 times always finds every file", async () => {
  await using dir = tempDir();
  const out = join(dir.path, "ui-dist");
  const built = await buildUi({ outdir: out });
  const paths = built.files.map((f) => join(out, f.path));
  const child = Bun.spawn(
    [
      "sh",
      "-c",
      `for i in $(seq 20); do "${process.execPath}" "${BUILD}" --outdir "${out}" --no-minify > /dev/null || exit 1; done`,
    ],
    { stdout: "ignore", stderr: "pipe" },
  );
  let polls = 0;
  let missing = 0;
  while (child.exitCode === null) {
    for (const p of paths) if (!existsSync(p)) missing++;
    polls++;
    // Yield now and then so the exit is noticed; the tight polling between is the point.
    if (polls % 2000 === 0) await new Promise((r) => setImmediate(r));
  }
  expect(await child.exited).toBe(0);
  expect(polls).toBeGreaterThan(100);
  expect(missing).toBe(0);
}, 120_000);
