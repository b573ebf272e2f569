/**
 * `/metrics` must pass `promtool check metrics` (Debian package `prometheus`), the Prometheus
 * text exposition format plus its naming lint. The appliance runs in-process on loopback port 0.
 */
import { expect } from "bun:test";
import { loadConfig } from "../../src/config/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { startAppliance } from "../../src/main.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { isolatedServeEnv } from "./serve-env.ts";

async function promtoolCheck(exposition: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(["promtool", "check", "metrics"], {
    stdin: new Blob([exposition]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, output: (out + err).trim() };
}

peerTest("live /metrics passes promtool check metrics", [PEERS.promtool], async () => {
  await using dir = tempDir("svc-e2e-metrics-");
  const { config } = loadConfig({ env: isolatedServeEnv(dir.path) });
  const app = await startAppliance(config, createLogger());
  try {
    expect(app.coordinatorUrl).toBeString();
    // Scrape twice: the second scrape also carries whatever the first request counted.
    await fetch(`${app.coordinatorUrl}/metrics`);
    const res = await fetch(`${app.coordinatorUrl}/metrics`);
    const body = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type") ?? "").toStartWith("text/plain");
    expect(body).toContain("# TYPE process_cpu_seconds_total counter");
    const check = await promtoolCheck(body);
    expect(check.output).toBe("");
    expect(check.code).toBe(0);
  } finally {
    await app.stop();
  }
});

peerTest("promtool check metrics rejects what it should (the check above can fail)", [PEERS.promtool], async () => {
  const lint = await promtoolCheck("# HELP requests served\n# TYPE requests counter\nrequests 1\n");
  expect(lint.output).toContain(`"_total" suffix`);
  expect(lint.code).not.toBe(0);
  const broken = await promtoolCheck('up{job="a" 1\n');
  expect(broken.output).toContain("parsing error");
  expect(broken.code).not.toBe(0);
});
