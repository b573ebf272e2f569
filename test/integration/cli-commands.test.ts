/**
 * Every command `svc help` lists answers `--help` with its usage and exit code 0, and an unknown
 * command is one line and exit code 2 (docs/CLI.md): the help and the dispatch come from the one
 * command table of src/main.ts, so a command cannot be listed without running.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const MAIN = join(import.meta.dir, "../../src/main.ts");
const svc = (args: string[]) => {
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], {
    env: { ...process.env, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
};

test("each listed command answers --help with exit 0; an unknown one is refused with exit 2", () => {
  const help = svc(["help"]);
  expect(help.code).toBe(0);
  const commands = help.out
    .slice(help.out.indexOf("Commands:"), help.out.indexOf("Options:"))
    .split("\n")
    .slice(1)
    .map((l) => /^ {2}([a-z-]+) /.exec(l)?.[1])
    .filter((c): c is string => c !== undefined);
  expect(commands).toContain("serve");
  expect(commands.length).toBeGreaterThanOrEqual(10);
  for (const c of commands) {
    const r = svc([c, "--help"]);
    expect({ c, code: r.code }).toEqual({ c, code: 0 });
    expect(`${r.out}${r.err}`).toMatch(/usage/i);
  }
  const bogus = svc(["bogus"]);
  expect([bogus.code, bogus.err.trim()]).toEqual([2, 'svc: unknown command "bogus" (try: svc help)']);
  expect(svc(["--version"]).out).toMatch(/^svc \S+ \(\S+\) bun /);
});
