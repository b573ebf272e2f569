/**
 * Fresh start as an operator sees it: `bun src/main.ts serve` as a real process, every listener on
 * 127.0.0.1:0, data in a temp dir. The random admin password is read from the JSON log, used to log
 * in, and the log is then scanned: the password appears once (the bootstrap line) and no token does.
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

test("fresh start: random admin password logged once, login works, JWT verifies with the persisted secret, no secret leaks", async () => {
  await using dir = tempDir();
  const configPath = join(dir.path, "svc.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      log: { format: "json", level: "debug" },
      coordinator: { http_server: { listen: "127.0.0.1:0" }, settings_db_path: join(dir.path, "settings.db") },
      node: { http_server: { listen: "127.0.0.1:0" } },
      ingest: { hep: { udp: { listen: "127.0.0.1:0" }, tcp: { listen: "127.0.0.1:0" }, tls: { listen: "127.0.0.1:0" } } },
      storage: { lakehouse: { catalog_path: join(dir.path, "catalog.sqlite"), data_path: join(dir.path, "lake/"), tuning: { temp_directory: join(dir.path, "tmp") } } },
    }),
  );

  const first = spawnServe(configPath);
  let token = "";
  let password = "";
  try {
    const boot = await first.line("bootstrap password line", (l) => typeof l.password === "string");
    password = String(boot.password);
    expect(boot.username).toBe("admin");
    expect(password.length).toBeGreaterThanOrEqual(16);
    const listening = await first.line("coordinator listening", (l) => l.msg === "listening" && l.module === "coordinator-http");
    const base = `http://${String(listening.address)}/api/v4`;

    const bad = await fetch(`${base}/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password: "sipcapture" }) });
    expect(bad.status).toBe(401);
    const res = await fetch(`${base}/auth/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password }) });
    expect(res.status).toBe(201);
    token = String(((await res.json()) as { token: string }).token);

    const secret = readFileSync(join(dir.path, ".svc_jwt_secret"), "utf8").trim();
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
    expect(payload).toMatchObject({ sub: "admin", username: "admin", admin: true });

    const me = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    const meText = await me.text();
    expect(meText).not.toContain("password");
    expect((await fetch(`${base}/users`)).status).toBe(401);
  } finally {
    await first.stop();
  }

  // Restart on the same data: no new password, the old token still verifies (secret reused).
  const second = spawnServe(configPath);
  try {
    const listening = await second.line("coordinator listening again", (l) => l.msg === "listening" && l.module === "coordinator-http");
    const base = `http://${String(listening.address)}/api/v4`;
    expect((await fetch(`${base}/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(second.lines.some((l) => typeof l.password === "string")).toBe(false);
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
