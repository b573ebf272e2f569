/**
 * `loadgen shell` and `loadgen tui` with control-API users (docs/LOADGEN.md "tui and shell"): the
 * real `svc loadgen shell` process logs in with -api_user/-api_password and reads its commands and
 * the passwords of useradd/passwd from stdin, against a management loadgen with internal users.
 */
import { describe, expect, test } from "bun:test";
import { join, resolve } from "node:path";
import { runLoadgen } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";
import { client, startUsersLoadgen } from "./loadgen-users-harness.ts";

const ROOT = resolve(import.meta.dir, "../..");

async function shell(args: string[], stdin: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "loadgen", "shell", ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  proc.stdin.write(stdin);
  await proc.stdin.end();
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const lines = (s: string) => s.split("\n").filter(Boolean);
  return { out: lines(out), err: lines(err), code };
}

describe("loadgen shell with control-API users", () => {
  test("useradd, users, passwd and userdel over stdin; passwords never on the command line", async () => {
    await using dir = tempDir("svc-loadgen-shell-");
    await using lg = await startUsersLoadgen(dir.path);
    const addr = lg.base.replace(/^http:\/\/|\/api\/v1$/g, "");
    const login = ["-api_addr", addr, "-api_user", "admin", "-api_password", lg.adminPassword];
    const { req, login: apiLogin } = client(lg.base);

    const add = await shell(
      login,
      [
        "useradd carol",
        "carol-password-1",
        "useradd dave admin",
        "dave-password-1",
        "users",
        "passwd carol",
        "carol-password-2",
        "quit",
        "",
      ].join("\n"),
    );
    expect(add.err).toEqual([]);
    expect(add.out).toEqual([
      "user carol added",
      "user dave added (admin)",
      "admin admin active",
      "carol user active",
      "dave admin active",
      "password of carol changed",
    ]);
    expect(add.code).toBe(0);
    // The admin set carol's password: the new one logs in, the first one no longer does.
    expect((await req("POST", "/login", undefined, { username: "carol", password: "carol-password-1" })).status).toBe(
      401,
    );
    await apiLogin("carol", "carol-password-2");

    // carol changes her own password: the current one first, then the new one.
    const own = await shell(
      ["-api_addr", addr, "-api_user", "carol", "-api_password", "carol-password-2"],
      ["passwd carol", "carol-password-2", "carol-password-3", "users", "userdel dave", ""].join("\n"),
    );
    expect(own.out).toEqual(["password of carol changed"]);
    expect(own.err).toEqual([
      "loadgen shell: control API 403: only an administrator may list users",
      "loadgen shell: control API 403: only an administrator may delete users",
    ]);
    expect(own.code).toBe(1);
    await apiLogin("carol", "carol-password-3");

    // Mistakes: a short password, a missing password line, the last admin... each one line on stderr.
    const bad = await shell(
      login,
      ["useradd erin", "short", "userdel nobody", "useradd", "userdel dave", "userdel carol", "passwd admin"].join(
        "\n",
      ),
    );
    expect(bad.err).toEqual([
      "loadgen shell: control API 400: password: at least 8 characters",
      'loadgen shell: control API 404: no user "nobody"',
      "loadgen shell: useradd needs a user name",
      "loadgen shell: passwd: the current password goes on the next line",
    ]);
    expect(bad.out).toEqual(["user dave deleted", "user carol deleted"]);
    expect(bad.code).toBe(1);
    const users = (await req("GET", "/users", await apiLogin("admin", lg.adminPassword))).body.users as Array<{
      username: string;
    }>;
    expect(users.map((u) => u.username)).toEqual(["admin"]);

    // The password may come from LOADGEN_API_PASSWORD instead of the command line (ps shows argv).
    const fromEnv = await shell(["-api_addr", addr, "-api_user", "admin"], "users\n", {
      LOADGEN_API_PASSWORD: lg.adminPassword,
    });
    expect([fromEnv.out, fromEnv.err, fromEnv.code]).toEqual([["admin admin active"], [], 0]);
    const wrong = await shell(
      ["-api_addr", addr, "-api_user", "admin", "-api_password", "not-the-password"],
      "users\n",
    );
    expect(wrong.err).toEqual(["loadgen shell: control API 401: wrong username or password"]);
    expect(wrong.code).toBe(1);
  });

  test("tui logs in with -api_user/-api_password; the flags are checked", async () => {
    await using dir = tempDir("svc-loadgen-shell-");
    await using lg = await startUsersLoadgen(dir.path);
    const addr = lg.base.replace(/^http:\/\/|\/api\/v1$/g, "");
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), tty: false };
    expect(
      await runLoadgen(
        ["tui", "-api_addr", addr, "-api_user", "admin", "-api_password", lg.adminPassword, "-count", "1"],
        io,
      ),
    ).toBe(0);
    expect(out).toEqual([expect.stringMatching(/uas: created=0 current=0 ok=0 failed=0/)]);
    expect(err).toEqual([]);
    for (const [argv, message] of [
      [["tui", "-api_user", "admin"], /-api_user and -api_password go together/],
      [
        ["shell", "-api_token", "t", "-api_user", "a", "-api_password", "b"],
        /give -api_token or -api_user with -api_password, not both/,
      ],
    ] as const) {
      const e: string[] = [];
      expect(await runLoadgen([...argv], { out: () => {}, err: (l) => e.push(l) })).toBe(2);
      expect(e).toEqual([expect.stringMatching(message)]);
    }
  });
});
