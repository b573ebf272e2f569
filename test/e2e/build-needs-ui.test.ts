/**
 * `make build` never makes an executable without the dashboard (docs/ARCHITECTURE.md "The dashboard"): in a copy of
 * this tree as a clone has it (no ui-dist/), a dashboard that does not compile stops the build
 * with the reason, before `bun build --compile` runs, and no executable is written.
 * (binary.test.ts checks the good case: the built executable serves the dashboard at `/`.)
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, cpSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../harness.ts";
import { ROOT } from "./binary-under-test.ts";

/** Tracked and new (not ignored) files of the tree, as `git clone` plus local edits would have them. */
function copyTree(to: string): void {
  const ls = Bun.spawnSync(["git", "ls-files", "-co", "--exclude-standard", "-z"], { cwd: ROOT, stdout: "pipe" });
  for (const rel of ls.stdout.toString().split("\0")) {
    if (rel === "" || rel === "node_modules" || !existsSync(join(ROOT, rel))) continue;
    mkdirSync(dirname(join(to, rel)), { recursive: true });
    cpSync(join(ROOT, rel), join(to, rel));
  }
  symlinkSync(join(ROOT, "node_modules"), join(to, "node_modules"));
}

describe("make build", () => {
  test("a dashboard that does not build fails the build loudly and writes no executable", async () => {
    await using dir = tempDir("svc-build-noui-");
    const tree = join(dir.path, "tree");
    copyTree(tree);
    expect(existsSync(join(tree, "ui-dist"))).toBe(false);
    appendFileSync(join(tree, "ui/src/main.ts"), "\nexport const broken = ;\n");
    const out = join(dir.path, "svc");
    const proc = Bun.spawn(["make", "--no-print-directory", "build", `BIN=${out}`], {
      cwd: tree,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(stderr).toContain("build: the dashboard did not build, so no executable is made");
    expect(stderr).toContain("ui/src/main.ts");
    expect(stdout).not.toContain("compile");
    expect(existsSync(out)).toBe(false);
    expect(code).not.toBe(0);
  }, 60_000);
});
