/**
 * A line-protocol write answered 204 survives a kill -9 (found by a red team: 14 000 rows answered
 * 204 were gone after SIGKILL, because the answer left while the rows were only in memory, up to
 * one seal interval before their spool file was written). The receiver now answers once the rows
 * are in a spool file (docs/ARCHITECTURE.md "Write path"): the appliance runs as a child process,
 * is killed the moment the last 204 arrives, and an in-process appliance on the same directories
 * must find every answered point.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { lpWrite } from "./lineproto-helpers.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BODIES = 8;
const POINTS = 250;
/** No flush during the run: every answered row is in the spool when the kill comes. */
const OVERRIDES = {
  log: { level: "info" },
  ingest: { line_protocol: { enable: true } },
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
};

/** The caller's environment minus SVC_* (loadConfig reads SVC_<PATH> and rejects unknown keys). */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  return env;
}

test("every point answered 204 is there after a kill -9 right after the answer", async () => {
  await using dir = tempDir();
  const cfgPath = join(dir.path, "svc.json");
  writeFileSync(cfgPath, JSON.stringify(testConfigJson(dir.path, OVERRIDES)));
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], {
    cwd: ROOT,
    env: childEnv(),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let lpAddress: string | undefined;
  let log = "";
  void (async () => {
    const dec = new TextDecoder();
    const reader = proc.stderr.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      log += dec.decode(r.value, { stream: true });
      const m = /"msg":"listening"[^\n]*"module":"lineproto-receiver","address":"([^"]+)"/.exec(log);
      if (m) lpAddress = m[1];
    }
  })();
  try {
    const address = await waitFor(
      "the child's line-protocol receiver",
      () => {
        if (proc.exitCode !== null) throw new Error(`child exited ${proc.exitCode}: ${log.slice(-500)}`);
        return lpAddress;
      },
      30_000,
    );
    const base = `http://${address}`;
    for (let b = 0; b < BODIES; b++) {
      const lines = Array.from(
        { length: POINTS },
        (_, i) => `k9lp,host=h${b} n=${b * POINTS + i}i ${Date.now() * 1000 + i}`,
      );
      const r = await lpWrite(base, "/write?precision=us", lines.join("\n"));
      expect(r.status).toBe(204);
    }
    // The moment the last answer is in: without the wait for the spool, the last body's rows are
    // still in memory (a seal comes every 100 ms).
    proc.kill("SIGKILL");
    await proc.exited;
  } finally {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  }

  await using a = await startTestAppliance(dir.path, OVERRIDES);
  const r = await a.app.lake!.query(
    "SELECT count(*) AS n, count(DISTINCT n) AS d, max(n) AS hi FROM svc_lake.main.k9lp",
  );
  expect(r.rows[0]).toEqual({ n: BODIES * POINTS, d: BODIES * POINTS, hi: BODIES * POINTS - 1 });
}, 90_000);
