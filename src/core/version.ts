import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** Replaced at build time by scripts/build.ts (`--define`); source runs read the clone's git files. */
declare const SVC_VERSION: string | undefined;
declare const SVC_GIT_REVISION: string | undefined;

export const VERSION: string = typeof SVC_VERSION === "string" ? SVC_VERSION : "0.1.0-dev";

const read = (p: string): string | undefined => {
  try {
    return readFileSync(p, "utf8").trim();
  } catch {
    return undefined;
  }
};

/**
 * The short commit of the clone at `root`, read from its git files (no git program needed):
 * `.git` is a folder, or a file `gitdir: …` in a worktree whose `commondir` holds the shared refs;
 * HEAD is a commit or `ref: refs/heads/…`, found loose or in packed-refs. "unknown" when any of
 * that is missing, so `npx svc --version` and `npm start` name the revision they run.
 */
export function gitRevisionOf(root: string): string {
  const dotGit = join(root, ".git");
  if (!existsSync(dotGit)) return "unknown";
  let gitDir = dotGit;
  if (statSync(dotGit).isFile()) {
    const m = /^gitdir:\s*(.+)$/m.exec(read(dotGit) ?? "");
    if (!m) return "unknown";
    gitDir = resolve(root, m[1]!);
  }
  const common = read(join(gitDir, "commondir"));
  const commonDir = common ? resolve(gitDir, common) : gitDir;
  const head = read(join(gitDir, "HEAD")) ?? "";
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  let sha = ref ? undefined : head;
  if (ref) {
    sha = read(join(gitDir, ref)) ?? read(join(commonDir, ref));
    if (!sha) {
      const packed = read(join(commonDir, "packed-refs")) ?? "";
      sha = packed
        .split("\n")
        .find((l) => l.endsWith(` ${ref}`))
        ?.split(" ")[0];
    }
  }
  return sha && /^[0-9a-f]{40,64}$/.test(sha) ? sha.slice(0, 7) : "unknown";
}

export const GIT_REVISION: string =
  typeof SVC_GIT_REVISION === "string" ? SVC_GIT_REVISION : gitRevisionOf(resolve(import.meta.dir, "../.."));
