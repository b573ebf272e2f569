/**
 * The published OpenAPI document was invalid (ten 204 responses with
 * `content: {"type": "void"}`, about 150 integer fields typed string). The document a real
 * appliance serves at /api/v4/openapi.json must pass openapi-spec-validator (PyPI, installed into
 * the test venv by scripts/python-peers.sh).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, pyPeersPython, tempDir, type Peer } from "../harness.ts";

const VALIDATOR: Peer = {
  install: "run scripts/python-peers.sh (pip: openapi-spec-validator==0.9.0)",
  probe: () => {
    try {
      return (
        Bun.spawnSync([pyPeersPython(), "-c", "import openapi_spec_validator"], { stdout: "ignore", stderr: "ignore" })
          .exitCode === 0
      );
    } catch {
      return false; // no venv: spawning a missing interpreter throws
    }
  },
};

async function validate(file: string): Promise<{ code: number; output: string }> {
  const p = Bun.spawn([pyPeersPython(), "-m", "openapi_spec_validator", file], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, output: (out + err).trim() };
}

peerTest(
  "GET /api/v4/openapi.json passes openapi-spec-validator",
  [VALIDATOR],
  async () => {
    await using dir = tempDir();
    // The live stream and the MCP tools on, so their routes (off by default) are in the document too.
    await using a = await startTestAppliance(dir.path, {
      coordinator: { hep_stream: { enable: true } },
      mcp: { enable: true },
    });
    const r = await fetch(`${a.app.coordinatorUrl}/api/v4/openapi.json`);
    expect(r.status).toBe(200);
    const text = await r.text();
    const doc = JSON.parse(text) as { openapi: string; paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).length).toBeGreaterThan(30);
    expect(Object.keys(doc.paths)).toContain("/api/v4/stream/hep");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/v4/mcp", "/api/v4/mcp/query", "/api/v4/mcp/llm/status"]),
    );
    const file = join(dir.path, "openapi.json");
    await Bun.write(file, text);
    const v = await validate(file);
    expect(v.output).toEndWith(": OK");
    expect(v.code).toBe(0);

    // The validator can fail: the generator's 204 shape is refused.
    const broken = structuredClone(doc) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const anyOp = Object.values(Object.values(broken.paths)[0]!)[0]!;
    anyOp.responses["204"] = { description: "x", content: { type: "void" } };
    await Bun.write(file, JSON.stringify(broken));
    const bad = await validate(file);
    // The quotes depend on the jsonschema version pip resolved (schemathesis shares the venv).
    expect(bad.output).toMatch(/["']void["'] is not of type ["']object["']/);
    expect(bad.code).not.toBe(0);
  },
  60_000,
);

/**
 * Operations whose success answer is no JSON object: 204s, files (PCAP, text, the avatar),
 * redirects (OAuth) and the MCP transport. Every other operation states its 2xx body's schema.
 */
const NO_JSON_BODY = new Set([
  "DELETE /api/v4/auth/sessions/{sessionId}",
  "GET /api/v4/auth/oauth2/{provider}/redirect",
  "GET /api/v4/auth/oauth2/{provider}/callback",
  "GET /api/v4/me/avatar",
  "DELETE /api/v4/me/settings/{category}",
  "DELETE /api/v4/users/{userId}",
  "DELETE /api/v4/dashboards/{dashboardId}",
  "DELETE /api/v4/tokens/{tokenId}",
  "DELETE /api/v4/aliases/{aliasId}",
  "DELETE /api/v4/hepsubs/{hepsubId}",
  "DELETE /api/v4/mappings/{mappingId}",
  "DELETE /api/v4/me/mappings/{mappingKey}",
  "DELETE /api/v4/agents/{nodeId}",
  "POST /api/v4/mcp",
  "GET /api/v4/mcp",
  "DELETE /api/v4/mcp",
  "POST /api/v4/transactions/export/pcap",
  "POST /api/v4/transactions/export/text",
  "GET /api/v4/exports/{exportId}/download",
  "GET /api/v4/share/{token}/{format}",
]);

type Op = { responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> };

test("every operation that answers JSON states its 2xx schema in the document", async () => {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { hep_stream: { enable: true } },
    mcp: { enable: true },
  });
  const doc = (await (await fetch(`${a.app.coordinatorUrl}/api/v4/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Op>>;
  };
  const missing: string[] = [];
  const listed: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const name = `${method.toUpperCase()} ${path}`;
      const success = Object.entries(op.responses ?? {}).filter(([code]) => code.startsWith("2"));
      const stated = success.some(([, r]) =>
        Object.values(r.content ?? {}).some((c) => c.schema && Object.keys(c.schema).length > 0),
      );
      if (stated) continue;
      if (NO_JSON_BODY.has(name)) listed.push(name);
      else missing.push(name);
    }
  }
  expect(missing).toEqual([]);
  // The list names only operations that exist and still lack a body schema: nothing stale in it.
  expect(listed.sort()).toEqual([...NO_JSON_BODY].sort());
}, 60_000);
