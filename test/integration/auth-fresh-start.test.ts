/**
 * Fresh start as an operator sees it: `bun src/main.ts serve` as a real process, every listener on
 * 127.0.0.1:0, data in a temp dir. The random admin password is read from the first-run banner on
 * stderr (plain text among the JSON log lines), used to log in, and stderr is then scanned: the
 * password appears once (the banner, never a log line) and no token does.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { jwtVerify } from "jose";
import { tempDir, waitFor } from "../harness.ts";

const ROOT = resolve(import.meta.dir, "../..");

interface LogLine {
  msg: string;
  [k: string]: unknown;
}

function spawnServe(configPath: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", configPath], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const pump = (async () => {
    const dec = new TextDecoder();
    let pending = "";
    const reader = proc.stderr.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = dec.decode(value, { stream: true });
      raw.push(text);
      pending += text;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        try {
          lines.push(JSON.parse(line) as LogLine);
        } catch {
          lines.push({ msg: line });
        }
      }
    }
  })();
  /** Resolves with the first log line matching `pred`; fails at once if the process exits first. */
  const line = (what: string, pred: (l: LogLine) => boolean): Promise<LogLine> =>
    Promise.race([
      waitFor(what, () => lines.find(pred), 30_000),
      proc.exited.then((code) => {
        throw new Error(`svc exited with ${code} before "${what}":\n${raw.join("")}`);
      }),
    ]);
  return {
    proc,
    lines,
    line,
    text: () => raw.join(""),
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      await pump;
    },
  };
}

/** The banner's `   key:  value` lines (src/cli/first-run.ts). */
const bannerValue = (lines: LogLine[], key: string) =>
  lines.map((l) => new RegExp(`^ {3}${key}: +(\\S+)$`).exec(l.msg)?.[1]).find((v) => v !== undefined);

function writeConfig(dir: string, coordinatorListen: string): string {
  const configPath = join(dir, "svc.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      log: { format: "json", level: "debug" },
      coordinator: { http_server: { listen: coordinatorListen }, settings_db_path: join(dir, "settings.db") },
      node: { http_server: { listen: "127.0.0.1:0" } },
      ingest: {
        hep: { udp: { listen: "127.0.0.1:0" }, tcp: { listen: "127.0.0.1:0" }, tls: { listen: "127.0.0.1:0" } },
      },
      storage: {
        lakehouse: {
          catalog_path: join(dir, "catalog.sqlite"),
          data_path: join(dir, "lake/"),
          tuning: { temp_directory: join(dir, "tmp") },
        },
      },
    }),
  );
  return configPath;
}

test("fresh start: random admin password in the first-run banner once, login works, JWT verifies with the persisted secret, no secret leaks", async () => {
  await using dir = tempDir();
  const configPath = writeConfig(dir.path, "127.0.0.1:0");

  const first = spawnServe(configPath);
  let token = "";
  let password = "";
  try {
    await first.line("the banner's reset hint", (l) => l.msg.startsWith("   svc reset-admin-password"));
    password = bannerValue(first.lines, "password") ?? "";
    expect(bannerValue(first.lines, "user")).toBe("admin");
    expect(password.length).toBeGreaterThanOrEqual(16);
    expect(first.lines.map((l) => l.msg)).toContain(`   svc reset-admin-password --config-path ${configPath}`);
    // Where svc listens, from the effective config, and how to bind to one address.
    expect(
      first.lines.some((l) => /^ {3}HEP UDP .*ingest\.hep\.udp\.listen \/ SVC_INGEST_HEP_UDP_LISTEN$/.test(l.msg)),
    ).toBe(true);
    expect(first.lines.some((l) => /^ {3}SVC_COORDINATOR_HTTP_SERVER_LISTEN=127\.0\.0\.1:\d+$/.test(l.msg))).toBe(true);
    const boot = first.lines.find((l) => l.msg.startsWith("bootstrap administrator password generated"));
    expect(boot?.username).toBe("admin");
    expect(boot && "password" in boot).toBe(false);
    const listening = await first.line(
      "coordinator listening",
      (l) => l.msg === "listening" && l.module === "coordinator-http",
    );
    // The banner's URL is the dashboard's: the bound loopback address here.
    expect(bannerValue(first.lines, "URL")).toBe(`http://${String(listening.address)}/`);
    const base = `http://${String(listening.address)}/api/v4`;

    const bad = await fetch(`${base}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "sipcapture" }),
    });
    expect(bad.status).toBe(401);
    const res = await fetch(`${base}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password }),
    });
    expect(res.status).toBe(201);
    token = String(((await res.json()) as { token: string }).token);

    const secret = readFileSync(join(dir.path, ".svc_jwt_secret"), "utf8").trim();
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
    expect(payload).toMatchObject({ sub: "admin", username: "admin", admin: true });

    const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    const meText = await me.text();
    // No secret: neither the password nor a hash (must_change_password is a flag, not a secret).
    expect(meText).not.toContain(password);
    expect(meText).not.toMatch(/password_hash|\$2[aby]\$/);
    expect((JSON.parse(meText) as { data: { must_change_password: boolean } }).data.must_change_password).toBe(true);
    expect((await fetch(`${base}/users`)).status).toBe(401);
  } finally {
    await first.stop();
  }

  // Restart on the same data: no new password, the old token still verifies (secret reused).
  const second = spawnServe(configPath);
  try {
    const listening = await second.line(
      "coordinator listening again",
      (l) => l.msg === "listening" && l.module === "coordinator-http",
    );
    const base = `http://${String(listening.address)}/api/v4`;
    expect((await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(bannerValue(second.lines, "password")).toBeUndefined();
    expect(second.text()).not.toContain("first start");
  } finally {
    await second.stop();
  }

  const log = first.text() + second.text();
  expect(log.split(password).length - 1).toBe(1);
  expect(log).not.toContain(token);
  expect(log).not.toContain(token.split(".")[2]!);
  expect(log).not.toContain(readFileSync(join(dir.path, ".svc_jwt_secret"), "utf8").trim());
  expect(log).not.toMatch(/\$2[aby]\$\d\d\$/);
}, 90_000);

test("a first start that fails after the bootstrap (port taken) still prints the banner, and that password works on the next start", async () => {
  await using dir = tempDir();
  const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const failed = spawnServe(writeConfig(dir.path, `127.0.0.1:${taken.port}`));
    expect(await failed.proc.exited).not.toBe(0);
    await failed.stop();
    expect(failed.text()).toContain("(the appliance did not start: see the error below)");
    const password = bannerValue(failed.lines, "password");
    expect(password?.length).toBeGreaterThanOrEqual(16);

    const next = spawnServe(writeConfig(dir.path, "127.0.0.1:0"));
    try {
      const listening = await next.line(
        "coordinator listening",
        (l) => l.msg === "listening" && l.module === "coordinator-http",
      );
      const res = await fetch(`http://${String(listening.address)}/api/v4/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password }),
      });
      expect(res.status).toBe(201);
      expect(bannerValue(next.lines, "password")).toBeUndefined();
    } finally {
      await next.stop();
    }
  } finally {
    taken.stop(true);
  }
}, 90_000);
