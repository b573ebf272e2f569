/**
 * The red-team suite runs schemathesis against the published OpenAPI document with a
 * logged-in administrator. This runs it too (PyPI schemathesis, installed into the test venv by
 * scripts/python-peers.sh), against a real appliance, with every check: no 5xx, every response as
 * the document describes it, schema-valid requests accepted and schema-invalid ones refused. The
 * few requests the document cannot tell from good ones are listed, with the reason, in
 * test/integration/schemathesis.toml. Bounded: a few examples per operation, no stateful phase.
 */
import { expect } from "bun:test";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, pyPeersPython, tempDir, type Peer } from "../harness.ts";

const ADMIN_PASSWORD = "schemathesis-admin-password";
const CONFIG = join(import.meta.dir, "schemathesis.toml");
const st = () => join(dirname(pyPeersPython()), "st");

const SCHEMATHESIS: Peer = {
  install: "run scripts/python-peers.sh (pip: schemathesis==4.32.5)",
  probe: () => {
    try {
      return Bun.spawnSync([st(), "--version"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
    } catch {
      return false; // no venv: spawning a missing program throws
    }
  },
};

peerTest(
  "schemathesis (all checks) finds nothing against GET /api/v4/openapi.json",
  [SCHEMATHESIS],
  async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: createHash("sha256").update(ADMIN_PASSWORD).digest("hex") } },
    });
    const base = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${base}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(201);
    const { token } = (await login.json()) as { token: string };

    const p = Bun.spawn(
      [
        st(),
        "--config-file",
        CONFIG,
        "run",
        `${base}/openapi.json`,
        "-H",
        `Authorization: Bearer ${token}`,
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        "10",
        "--seed",
        "14",
        "--generation-database",
        "none",
        // One worker: CPython 3.11's ast.parse, which hypothesis calls to describe filters, can
        // fail with "AST constructor recursion depth mismatch" when two threads parse at once.
        "--workers",
        "1",
        "--no-color",
      ],
      // Its cache and reports stay in the temp dir.
      { cwd: dir.path, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
    );
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    const output = `${out}\n${err}`;
    // On failure the summary and the first failures are what bun prints.
    if (code !== 0) console.error(output.slice(-20_000));
    expect(output).toContain("Tested: ");
    expect(output).not.toContain("Runtime Error");
    expect(code).toBe(0);
  },
  // About 100 s alone; the suite runs two files at once (package.json), so twice that and a margin.
  480_000,
);
