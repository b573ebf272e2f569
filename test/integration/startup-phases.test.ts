/**
 * The two-phase start (docs/ARCHITECTURE.md "Start-up"): the HTTP ports answer before the lake has
 * started. The lake is held in its start by a promise the test resolves (StartOptions.holdLake), so
 * every check below runs while it is starting, whatever the machine's speed; nothing is timed.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { startAppliance } from "../../src/main.ts";
import { testConfig } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const PASSWORD = "startup-test-password";

interface Health {
  status: string;
  output?: string;
  checks: Record<string, Array<{ status: string; state?: string; output?: string; observedValue?: number }>>;
}

function hold(): { gate: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { gate, release };
}

describe("start-up in two phases", () => {
  test("/health says starting, auth/providers and login answer, lake routes answer 503 with Retry-After, then 200 once the lake is ready", async () => {
    await using dir = tempDir("svc-startup-");
    const { gate, release } = hold();
    const app = await startAppliance(
      testConfig(dir.path, { coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } } }),
      createLogger({ test: true }),
      {
        background: true,
        holdLake: gate,
      },
    );
    try {
      expect(app.startup.ready).toBe(false);
      const api = `${app.coordinatorUrl}/api/v4`;

      const providers = await fetch(`${api}/auth/providers`);
      expect(providers.status).toBe(200);

      const health = await fetch(`${app.coordinatorUrl}/health`);
      expect(health.status).toBe(200);
      const h = (await health.json()) as Health;
      expect(h.status).toBe("warn");
      expect(h.checks.startup?.[0]).toMatchObject({ status: "warn", state: "starting" });
      expect(h.checks.startup?.[0]?.output).toContain("lake (catalog check)");
      // Not-yet-started ingest threads do not read as stuck.
      expect(h.checks["ingest:thread"]).toBeUndefined();
      const nodeHealth = (await (await fetch(`${app.nodeUrl}/health`)).json()) as Health;
      expect(nodeHealth.checks.startup?.[0]?.state).toBe("starting");

      const login = await fetch(`${api}/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: PASSWORD }),
      });
      expect(login.status).toBe(201);
      const { token } = (await login.json()) as { token: string };
      const now = Date.now();
      const search = () =>
        fetch(`${api}/transactions/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            filter: { proto_type: 1, event_type: "call" },
            param: { limit: 10 },
            timestamp: { from: now - 3_600_000, to: now },
          }),
        });

      const early = await search();
      expect(early.status).toBe(503);
      expect(Number(early.headers.get("retry-after"))).toBeGreaterThan(0);
      const body = (await early.json()) as { error: string; message: string };
      expect(body.error).toBe("STARTING");
      expect(body.message).toContain("still starting");
      expect(body.message).toContain("search needs the lake");
      // Without a credential the guard answers first, as always.
      expect((await fetch(`${api}/transactions/search`, { method: "POST" })).status).toBe(401);
      // The node port's lake routes too; its /health is open.
      const nodeStats = await fetch(`${app.nodeUrl}/api/v1/metadata/stats`);
      expect(nodeStats.status).toBe(503);
      expect(nodeStats.headers.get("retry-after")).not.toBeNull();
      // HEP over HTTP is refused, not taken, before the writer runs: the sender retries, nothing is lost.
      const hep = await fetch(`${app.nodeUrl}/api/v1/hep`, {
        method: "POST",
        body: new Uint8Array([0x48, 0x45, 0x50, 0x33]),
      });
      expect(hep.status).toBe(503);
      expect(hep.headers.get("retry-after")).not.toBeNull();

      release();
      await app.startup.whenReady();
      const ready = (await (await fetch(`${app.coordinatorUrl}/health`)).json()) as Health;
      expect(ready.checks.startup?.[0]).toMatchObject({ status: "pass", state: "ready" });
      expect(ready.checks.startup?.[0]?.observedValue).toBeGreaterThanOrEqual(0);
      expect((await search()).status).toBe(200);
      expect((await fetch(`${app.nodeUrl}/api/v1/metadata/stats`)).status).toBe(200);
    } finally {
      release();
      await app.stop();
    }
  }, 60_000);

  test("a stop while the lake starts waits for it, starts nothing more and stops what has started", async () => {
    await using dir = tempDir("svc-startup-");
    const { gate, release } = hold();
    const app = await startAppliance(testConfig(dir.path), createLogger({ test: true }), {
      background: true,
      holdLake: gate,
    });
    const url = app.coordinatorUrl!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const stopping = app.stop();
    release();
    expect(await stopping).toBe(true);
    await expect(app.startup.whenReady()).rejects.toThrow("stopped during start-up");
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  }, 60_000);

  test("a module failing in the background stops the HTTP ports too and rejects with its error", async () => {
    await using dir = tempDir("svc-startup-");
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const app = await startAppliance(
        testConfig(dir.path, { ingest: { hep: { tcp: { listen: `127.0.0.1:${taken.port}` } } } }),
        createLogger({ test: true }),
        { background: true },
      );
      const url = app.coordinatorUrl!;
      const err = await app.startup.whenReady().then(
        () => undefined,
        (e: unknown) => e as { code?: string; message?: string },
      );
      expect(err?.code).toBe("CONFIG_INVALID");
      expect(err?.message).toContain("address already in use");
      await expect(fetch(`${url}/health`)).rejects.toThrow();
      expect(await app.stop()).toBe(true);
    } finally {
      taken.stop(true);
    }
  }, 60_000);
});

/**
 * The auth module's start does not wait for the dummy bcrypt hash of unknown-user logins (about
 * 100 ms, a third of a start; docs/ARCHITECTURE.md "Start-up"): it runs on Bun's worker pool while
 * the port opens. Deterministic: after starting the hash, the module's start awaits only settled
 * work (an existing administrator, no digest to wrap), so it resolves before any hash could be
 * delivered. A fresh process, since the dummy hash is computed once per process.
 */
test("the auth module starts without waiting for the dummy hash; a login of an unknown user waits for it", async () => {
  await using dir = tempDir("svc-startup-dummy-");
  const src = (p: string) => JSON.stringify(`${import.meta.dir}/../../src/${p}`);
  const script = `
    const { configureLogging, createLogger, MetricsRegistry } = await import(${src("core/index.ts")});
    const { createSettingsModule } = await import(${src("settings/index.ts")});
    const { createAuthModule, sha256Hex } = await import(${src("auth/index.ts")});
    const { dummyHashReady, verifyPassword } = await import(${src("auth/passwords.ts")});
    const { testConfig } = await import(${JSON.stringify(`${import.meta.dir}/../appliance.ts`)});
    configureLogging({ level: "error", format: "json" });
    const logger = createLogger({ test: true });
    const config = testConfig(${JSON.stringify(dir.path)}, { coordinator: { auth: { admin_password_hash: sha256Hex("x") } } }).coordinator;
    const settings = createSettingsModule({ path: config.settings_db_path, games: false }, logger);
    await settings.module.start();
    // The administrator of an earlier start: the bootstrap keeps it and hashes nothing.
    const passwordHash = await Bun.password.hash("an-earlier-password", { algorithm: "bcrypt", cost: 4 });
    settings.store.users.create({ username: config.auth.admin_user, passwordHash, isAdmin: true, isActive: true, mustChangePassword: false });
    const auth = createAuthModule(config, settings.store, logger, new MetricsRegistry());
    await auth.module.start();
    const atStart = dummyHashReady();
    const unknownUser = await verifyPassword("any-password", "");
    const afterLogin = dummyHashReady();
    await auth.module.stop();
    await settings.module.stop();
    console.log(JSON.stringify({ atStart, unknownUser, afterLogin }));`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(JSON.parse(out)).toEqual({ atStart: false, unknownUser: false, afterLogin: true });
});
