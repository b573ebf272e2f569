/**
 * Source runs (`npx svc --version`, `npm start`) name the commit they run, read from the clone's
 * git files by src/core/version.ts: a plain clone, packed refs, a detached HEAD, a worktree.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gitRevisionOf } from "../../src/core/version.ts";
import { tempDir } from "../harness.ts";

const SHA = "0123456789abcdef0123456789abcdef01234567";
const OTHER = "fedcba9876543210fedcba9876543210fedcba98";

function file(path: string, text: string): void {
  mkdirSync(resolve(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

describe("gitRevisionOf", () => {
  test("a loose branch ref, a packed one, a detached HEAD", async () => {
    await using d = tempDir();
    file(join(d.path, ".git/HEAD"), "ref: refs/heads/main\n");
    file(join(d.path, ".git/refs/heads/main"), `${SHA}\n`);
    expect(gitRevisionOf(d.path)).toBe("0123456");
    file(join(d.path, ".git/HEAD"), "ref: refs/heads/packed\n");
    file(
      join(d.path, ".git/packed-refs"),
      `# pack-refs with: peeled fully-peeled sorted\n${OTHER} refs/heads/packed\n`,
    );
    expect(gitRevisionOf(d.path)).toBe("fedcba9");
    file(join(d.path, ".git/HEAD"), `${SHA}\n`);
    expect(gitRevisionOf(d.path)).toBe("0123456");
  });

  test("a worktree: .git is a file naming its git dir, refs in the common dir", async () => {
    await using d = tempDir();
    const main = join(d.path, "main/.git");
    file(join(main, "refs/heads/topic"), `${OTHER}\n`);
    file(join(main, "worktrees/wt/HEAD"), "ref: refs/heads/topic\n");
    file(join(main, "worktrees/wt/commondir"), "../..\n");
    file(join(d.path, "wt/.git"), `gitdir: ${join(main, "worktrees/wt")}\n`);
    expect(gitRevisionOf(join(d.path, "wt"))).toBe("fedcba9");
  });

  test("no .git, or a ref that names nothing: unknown", async () => {
    await using d = tempDir();
    expect(gitRevisionOf(d.path)).toBe("unknown");
    file(join(d.path, ".git/HEAD"), "ref: refs/heads/gone\n");
    expect(gitRevisionOf(d.path)).toBe("unknown");
  });

  test("this clone: the same commit git names", () => {
    const root = resolve(import.meta.dir, "../..");
    const git = Bun.spawnSync(["git", "rev-parse", "--short=7", "HEAD"], { cwd: root });
    if (git.exitCode !== 0) throw new Error(`git rev-parse failed in ${root}: ${git.stderr.toString()}`);
    expect(gitRevisionOf(root)).toBe(git.stdout.toString().trim());
  });
});
