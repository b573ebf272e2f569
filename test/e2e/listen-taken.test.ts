/**
 * A second instance on a taken web port must not start (docs/ARCHITECTURE.md "HTTP servers and listeners"). Elysia's Bun adapter binds with
 * SO_REUSEPORT by default, so a second svc on :8080 started and the kernel split connections
 * between two appliances. One appliance runs in this process with every listener; for each of its
 * addresses a second `svc serve` (a real child process) is started on that address alone and must
 * stop with exit code 2 and the error naming the listener's config key.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createHttpModule } from "../../src/api/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { Elysia } from "elysia";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir, type TempDir } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";
import { isolatedServeEnv } from "./serve-env.ts";

/** A second `svc serve` with `env` on top of the isolated settings; its exit code and stderr. */
async function secondServe(
  dir: TempDir,
  name: string,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const child = Bun.spawn([process.execPath, "src/main.ts", "serve"], {
    env: { ...process.env, ...isolatedServeEnv(join(dir.path, name)), SVC_LOG_FORMAT: "json", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  // A second svc that does start (the defect) is stopped, so the test fails instead of hanging.
  let stderr = "";
  const dec = new TextDecoder();
  const reader = child.stderr.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    stderr += dec.decode(r.value, { stream: true });
    if (!child.killed && stderr.includes('"svc started"')) child.kill("SIGTERM");
  }
  return { code: await child.exited, stderr };
}

/** A listener of the first svc: the second is started on its address alone. */
interface TakenCase {
  name: string;
  key: string;
  port: number;
  env?: Record<string, string>;
}

/**
 * Starts a second svc on each case's address (its config key set by environment) and checks that
 * each stops with exit code 2, never started, and names the listener, address and key; the results.
 */
async function expectRefused(dir: TempDir, cases: TakenCase[]): Promise<Array<{ code: number; stderr: string }>> {
  const results = await Promise.all(
    cases.map((c, i) =>
      secondServe(dir, `second-${i}`, {
        [`SVC_${c.key.toUpperCase().replace(/\./g, "_")}`]: `127.0.0.1:${c.port}`,
        ...c.env,
      }),
    ),
  );
  for (const [i, c] of cases.entries()) {
    const r = results[i]!;
    expect(r.stderr).toContain(`${c.name}: cannot listen on 127.0.0.1:${c.port} (${c.key}): address already in use`);
    expect(r.stderr).not.toContain('"svc started"');
    // 2: a configuration the machine cannot serve (CONFIG_INVALID), also when the listener runs
    // on the HEP ingest thread (its AppError keeps its code across the thread).
    expect(r.code).toBe(2);
  }
  return results;
}

describe("a taken listen address stops a second svc", () => {
  peerTest(
    "every HTTP, HEP and line-protocol listener of a running svc refuses a second svc on its port",
    [OPENSSL],
    async () => {
      await using dir = tempDir("svc-e2e-taken-");
      const { cert, key } = selfSignedCert(dir.path);
      await using a = await startTestAppliance(join(dir.path, "first"), {
        ingest: { hep: { tls: { cert, key } }, line_protocol: { enable: true } },
      });
      const port = (url: string | undefined) => Number(new URL(url!).port);
      const listeners = a.app.ingest!.listeners;
      const cases: Array<{ name: string; key: string; port: number; env?: Record<string, string>; hint?: string }> = [
        {
          name: "coordinator-http",
          key: "coordinator.http_server.listen",
          port: port(a.app.coordinatorUrl),
          hint: "coordinator.http_server.reuse_port",
        },
        {
          name: "node-http",
          key: "node.http_server.listen",
          port: port(a.app.nodeUrl),
          hint: "node.http_server.reuse_port",
        },
        { name: "hep-tcp", key: "ingest.hep.tcp.listen", port: listeners.tcp!.port() },
        {
          name: "hep-tls",
          key: "ingest.hep.tls.listen",
          port: listeners.tls!.port(),
          env: { SVC_INGEST_HEP_TLS_CERT: cert, SVC_INGEST_HEP_TLS_KEY: key },
        },
        { name: "hep-udp", key: "ingest.hep.udp.listen", port: listeners.udp!.port() },
        // Bun's own UDP socket as well as the recvmmsg one (ingest.hep.udp.batch_receive).
        {
          name: "hep-udp",
          key: "ingest.hep.udp.listen",
          port: listeners.udp!.port(),
          env: { SVC_INGEST_HEP_UDP_BATCH_RECEIVE: "false" },
        },
        {
          name: "line-protocol receiver",
          key: "ingest.line_protocol.listen",
          port: a.app.lineProtocol!.port(),
          env: { SVC_INGEST_LINE_PROTOCOL_ENABLE: "true" },
        },
      ];
      const results = await expectRefused(dir, cases);
      for (const [i, c] of cases.entries()) if (c.hint) expect(results[i]!.stderr).toContain(`set ${c.hint} = true`);
      // The first appliance still answers on its port.
      expect((await fetch(`${a.app.coordinatorUrl}/health`)).status).toBe(200);
    },
    120_000,
  );

  peerTest(
    "with several ingest threads on both sides (SO_REUSEPORT) the second svc still refuses the HEP ports, naming the address",
    [OPENSSL],
    async () => {
      await using dir = tempDir("svc-e2e-taken-threads-");
      const { cert, key } = selfSignedCert(dir.path);
      await using a = await startTestAppliance(join(dir.path, "first"), {
        ingest: { hep: { threads: 2, tls: { cert, key } } },
      });
      const listeners = a.app.ingest!.listeners;
      const threads = { SVC_INGEST_HEP_THREADS: "2" };
      const cases = [
        { name: "hep-tcp", key: "ingest.hep.tcp.listen", port: listeners.tcp!.port(), env: threads },
        {
          name: "hep-tls",
          key: "ingest.hep.tls.listen",
          port: listeners.tls!.port(),
          env: { ...threads, SVC_INGEST_HEP_TLS_CERT: cert, SVC_INGEST_HEP_TLS_KEY: key },
        },
        { name: "hep-udp", key: "ingest.hep.udp.listen", port: listeners.udp!.port(), env: threads },
      ];
      await expectRefused(dir, cases);
    },
    120_000,
  );

  test("reuse_port = true is what lets two servers share a port", async () => {
    const logger = createLogger({ test: true });
    const app = (n: number) => new Elysia().get("/", () => n);
    const first = createHttpModule(
      app(1),
      { name: "a", listen: "127.0.0.1:0", listenKey: "a.listen", reusePort: true },
      logger,
    );
    await first.start();
    try {
      const listen = `127.0.0.1:${first.port()}`;
      const refused = createHttpModule(
        app(2),
        { name: "b", listen, listenKey: "b.listen", reusePortKey: "b.reuse_port" },
        logger,
      );
      await expect(refused.start()).rejects.toThrow(`b: cannot listen on ${listen} (b.listen): address already in use`);
      const shared = createHttpModule(app(3), { name: "c", listen, listenKey: "c.listen", reusePort: true }, logger);
      await shared.start();
      expect(shared.port()).toBe(first.port());
      await shared.stop();
    } finally {
      await first.stop();
    }
  });
});
