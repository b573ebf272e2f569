/**
 * Bootstrap rules and `--reset-admin-password` (docs/API.md "Authentication"), on real settings files.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BCRYPT_COST, LEGACY_DEFAULT_DIGEST, isBcryptHash, isWrappedDigest, sha256Hex } from "../../src/auth/index.ts";
import { configureLogging } from "../../src/core/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, startCore } from "./auth-harness.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** Runs `fn` with every log line captured (level debug), then restores the test default. */
async function captureLogs<T>(fn: () => Promise<T>): Promise<{ result: T; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  configureLogging({
    level: "debug",
    format: "json",
    sink: { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) },
  });
  try {
    return { result: await fn(), lines };
  } finally {
    configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
  }
}

describe("admin bootstrap", () => {
  test("the well-known default digest is treated as empty: a random bcrypt password is generated and 'sipcapture' does not log in", async () => {
    await using dir = tempDir();
    const { result: c, lines } = await captureLogs(() =>
      startCore(dir.path, { coordinator: { auth: { admin_password_hash: LEGACY_DEFAULT_DIGEST } } }),
    );
    await using core = c;
    // The password goes to the first-run banner (taken once), never into a log line.
    const boot = core.core.auth.takeFirstRunAdmin();
    expect(boot?.username).toBe("admin");
    expect(core.core.auth.takeFirstRunAdmin()).toBeUndefined();
    expect(lines.some((l) => l.msg === "module failed to start")).toBe(false);
    expect(JSON.stringify(lines)).not.toContain(boot!.password);
    expect(lines.find((l) => String(l.msg).startsWith("bootstrap administrator password generated"))?.username).toBe(
      "admin",
    );
    expect(isBcryptHash(core.core.settings.users.getWithSecret("admin")!.passwordHash)).toBe(true);
    expect(
      (await core.call("POST", "/auth/sessions", { body: { username: "admin", password: "sipcapture" } })).status,
    ).toBe(401);
    expect(
      (await core.call("POST", "/auth/sessions", { body: { username: "admin", password: boot!.password } })).status,
    ).toBe(201);
  });

  test("inserted once: an existing non-empty hash is never changed by a different configured hash", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      expect(isWrappedDigest(c.core.settings.users.getWithSecret("admin")!.passwordHash)).toBe(true);
    }
    await using c2 = await startCore(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex("another-password") } },
    });
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(201);
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: "another-password" } })).status,
    ).toBe(401);
  });

  test("the configured digest is stored as bcrypt of the digest, never bare; the first login rehashes it to plain bcrypt", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const stored = () => c.core.settings.users.getWithSecret("admin")!.passwordHash;
    const boot = stored();
    expect(isWrappedDigest(boot)).toBe(true);
    expect(boot).not.toContain(sha256Hex(ADMIN_PASSWORD));
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "not-the-password" } })).status,
    ).toBe(401);
    expect(stored()).toBe(boot);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(201);
    const after = stored();
    expect(isBcryptHash(after)).toBe(true);
    expect(after).toStartWith(`$2b$${BCRYPT_COST}$`);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(201);
    expect(stored()).toBe(after);
  });

  test("a bare SHA-256 digest left by an older build is wrapped at start and still logs in", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      const carl = c.core.settings.users.create({
        username: "carl",
        passwordHash: sha256Hex("carl-password").toUpperCase(),
      });
      const admin = c.core.settings.users.getByUsername("admin")!;
      c.core.settings.users.update(admin.id, { passwordHash: sha256Hex(ADMIN_PASSWORD) });
      expect(carl.id).toBeString();
    }
    await using c2 = await startCore(dir.path);
    for (const name of ["admin", "carl"]) {
      const h = c2.core.settings.users.getWithSecret(name)!.passwordHash;
      expect(`${name}: ${isWrappedDigest(h)}`).toBe(`${name}: true`);
    }
    expect(
      c2.core.settings.db.db.query("SELECT count(*) AS n FROM users WHERE length(password_hash) = 64").get(),
    ).toEqual({ n: 0 });
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "carl", password: "carl-password" } })).status,
    ).toBe(201);
    expect(isBcryptHash(c2.core.settings.users.getWithSecret("carl")!.passwordHash)).toBe(true);
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(201);
  });

  test("an existing row with an empty hash is repaired with the configured hash", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      const admin = c.core.settings.users.getByUsername("admin")!;
      c.core.settings.users.update(admin.id, { passwordHash: "" });
      expect((await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "" } })).status).toBe(400);
    }
    await using c2 = await startCore(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex("repaired-pass") } },
    });
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: "repaired-pass" } })).status,
    ).toBe(201);
  });

  test("a malformed configured hash stops the start with the key named", async () => {
    await using dir = tempDir();
    await expect(
      startCore(dir.path, { coordinator: { auth: { admin_password_hash: "plaintext-password" } } }),
    ).rejects.toThrow("coordinator.auth.admin_password_hash");
  });

  test("auth type ldap skips the internal bootstrap", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { auth: { type: "ldap" } } });
    expect(c.core.settings.users.getByUsername("admin")).toBeUndefined();
  });
});

describe("svc --config-path f --reset-admin-password", () => {
  const run = (args: string[], env: Record<string, string> = {}) => {
    const p = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  };

  test("writes the configured digest for admin_user, prints a confirmation and exits without serving", async () => {
    await using dir = tempDir();
    const db = join(dir.path, "settings.db");
    {
      await using c = await startCore(dir.path);
      expect(
        (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
      ).toBe(201);
    }
    const cfg = join(dir.path, "svc.json");
    writeFileSync(
      cfg,
      JSON.stringify({
        coordinator: {
          settings_db_path: db,
          http_server: { listen: "127.0.0.1:1" },
          auth: { admin_password_hash: sha256Hex("after-reset-pw") },
        },
      }),
    );
    const r = run(["--config-path", cfg, "--reset-admin-password"]);
    expect(r.out).toContain('password of administrator "admin" reset');
    expect(r.code).toBe(0);
    expect(r.err).not.toContain("listening");
    await using c2 = await startCore(dir.path);
    expect(isWrappedDigest(c2.core.settings.users.getWithSecret("admin")!.passwordHash)).toBe(true);
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: "after-reset-pw" } })).status,
    ).toBe(201);
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(401);
  });

  test.each([
    [{}, "admin_password_hash"],
    [{ admin_password_hash: LEGACY_DEFAULT_DIGEST }, "well-known default"],
    [{ admin_password_hash: "abc" }, "64-character hex"],
  ])("auth %j → exit 2 naming %s", async (auth, expected) => {
    await using dir = tempDir();
    const cfg = join(dir.path, "svc.json");
    writeFileSync(cfg, JSON.stringify({ coordinator: { settings_db_path: join(dir.path, "s.db"), auth } }));
    const r = run(["--config-path", cfg, "--reset-admin-password"]);
    expect(r.err).toContain(expected);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.code).toBe(2);
  });

  test("an empty settings_db_path → exit 2", async () => {
    await using dir = tempDir();
    const cfg = join(dir.path, "svc.json");
    writeFileSync(
      cfg,
      JSON.stringify({ coordinator: { settings_db_path: "", auth: { admin_password_hash: sha256Hex("x-password") } } }),
    );
    const r = run(["--config-path", cfg, "--reset-admin-password"]);
    expect(r.err).toContain("settings_db_path");
    expect(r.code).toBe(2);
  });
});

describe("svc reset-admin-password (no configured digest needed)", () => {
  const run = (args: string[], stdin?: string) => {
    const p = Bun.spawnSync([process.execPath, join(ROOT, "src/main.ts"), "reset-admin-password", ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "" },
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    });
    return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
  };
  const config = (dir: string) => {
    const cfg = join(dir, "svc.json");
    writeFileSync(cfg, JSON.stringify({ coordinator: { settings_db_path: join(dir, "settings.db") } }));
    return cfg;
  };

  test("generates a new password, prints it once, and it logs in while the old one does not", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      expect(
        (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
      ).toBe(201);
    }
    const r = run(["--config-path", config(dir.path)]);
    expect(r.out).toContain('password of administrator "admin" reset in');
    const password = /^ {2}password: +(\S+)$/m.exec(r.out)?.[1];
    expect(password?.length).toBeGreaterThanOrEqual(16);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    await using c2 = await startCore(dir.path);
    expect((await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: password! } })).status).toBe(
      201,
    );
    expect(
      (await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } })).status,
    ).toBe(401);
  });

  test("--pass-stdin takes the first line of stdin and does not print it; a short one is a usage error", async () => {
    await using dir = tempDir();
    const cfg = config(dir.path);
    const r = run(["--config-path", cfg, "--pass-stdin"], "typed-new-password\nsecond line\n");
    expect(r.out).toContain('password of administrator "admin" set (user created)');
    expect(r.out).not.toContain("typed-new-password");
    expect(r.code).toBe(0);
    const short = run(["--config-path", cfg, "--pass-stdin"], "short\n");
    expect(short.err.trim()).toBe("svc: --pass-stdin: the password must have at least 8 characters");
    expect(short.code).toBe(2);
    // Four emoji are 8 UTF-16 units but 4 characters (docs/AUTH.md "Password rules").
    const emoji = run(["--config-path", cfg, "--pass-stdin"], "😀😀😀😀\n");
    expect([emoji.err.trim(), emoji.code]).toEqual([
      "svc: --pass-stdin: the password must have at least 8 characters",
      2,
    ]);
    await using c = await startCore(dir.path, { coordinator: { auth: { admin_password_hash: "" } } });
    expect(isBcryptHash(c.core.settings.users.getWithSecret("admin")!.passwordHash)).toBe(true);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "typed-new-password" } })).status,
    ).toBe(201);
  });
});
