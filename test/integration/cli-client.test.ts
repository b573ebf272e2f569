/**
 * The search client's plumbing with real files and sockets: the token cache (~/.svc_token, 0600,
 * one entry per coordinator, expired entries not offered), and TLS verification for https hosts
 * (on by default, skipped only with SVC_INSECURE_TLS = 1/true/yes), for `svc search` and
 * `svc agent` alike (docs/CLI.md "Authentication").
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runAgent, type CliIo } from "../../src/cli/index.ts";
import { CoordinatorClient } from "../../src/cli/coordinator-client.ts";
import { TokenCache, tokenCachePath } from "../../src/cli/token-cache.ts";
import { peerTest, tempDir } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";

describe("token cache", () => {
  test("0600, one entry per coordinator URL, user and expiry respected, delete removes only that entry", async () => {
    await using home = tempDir("svc-cli-cache-");
    const path = tokenCachePath({ HOME: home.path });
    expect(path).toBe(join(home.path, ".svc_token"));
    const cache = new TokenCache(path);
    const now = Date.parse("2024-05-01T12:00:00Z");
    cache.set("http://a:1/api/v4", { user: "admin", token: "tok-a", expires_at: "2024-05-01T13:00:00Z" });
    cache.set("https://b/api/v4", { user: "ops", token: "tok-b", expires_at: "" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(cache.get("http://a:1/api/v4", undefined, now)?.token).toBe("tok-a");
    expect(cache.get("http://a:1/api/v4", "admin", now)?.token).toBe("tok-a");
    expect(cache.get("http://a:1/api/v4", "someone-else", now)).toBeUndefined();
    expect(cache.get("http://a:2/api/v4", undefined, now)).toBeUndefined();
    // Expired, or within 30 s of expiry: not offered.
    expect(cache.get("http://a:1/api/v4", undefined, Date.parse("2024-05-01T12:59:45Z"))).toBeUndefined();
    expect(cache.get("https://b/api/v4", undefined, now)?.token).toBe("tok-b");
    cache.delete("http://a:1/api/v4");
    expect(Object.keys(JSON.parse(readFileSync(path, "utf8")) as object)).toEqual(["https://b/api/v4"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("a file others could read is tightened on the next write; a broken file counts as empty", async () => {
    await using home = tempDir("svc-cli-cache-");
    const path = join(home.path, ".svc_token");
    writeFileSync(path, "not json", { mode: 0o644 });
    const cache = new TokenCache(path);
    expect(cache.get("http://a/api/v4", undefined)).toBeUndefined();
    cache.set("http://a/api/v4", { user: "u", token: "t", expires_at: "" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(cache.get("http://a/api/v4", "u")?.token).toBe("t");
  });
});

function captureIo(env: Record<string, string>): CliIo & { text(): string } {
  let out = "";
  return {
    out: async (t) => void (out += t),
    err: async () => {},
    env,
    stdin: process.stdin,
    stdout: process.stdout,
    now: () => Date.now(),
    text: () => out,
  };
}

describe("TLS verification", () => {
  peerTest(
    "https with a self-signed certificate: refused with a hint, accepted with SVC_INSECURE_TLS",
    [OPENSSL],
    async () => {
      await using dir = tempDir("svc-cli-tls-");
      const { cert, key } = selfSignedCert(dir.path);
      const seen: string[] = [];
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        tls: { key: Bun.file(key), cert: Bun.file(cert) },
        fetch(req) {
          const path = new URL(req.url).pathname;
          seen.push(`${req.method} ${path} ${req.headers.get("authorization") ?? ""}`);
          if (path === "/api/v4/transactions/search")
            return Response.json({
              data: { items: [{ id: 1 }], keys: ["id"] },
              meta: { pagination: { limit: 1, total: 1 } },
            });
          if (path === "/health")
            return Response.json({ status: "ok", connected_transports: 1, queue_size: 0, buffer_size_bytes: 0 });
          return new Response("no", { status: 404 });
        },
      });
      try {
        const origin = `https://127.0.0.1:${server.port}`;
        const client = (insecureTls: boolean) =>
          new CoordinatorClient(origin, { token: "jwt-x" }, undefined, { insecureTls, timeoutMs: 5000 });
        const refused = await client(false)
          .post("/transactions/search", {})
          .catch((e: Error) => e);
        expect(refused).toBeInstanceOf(Error);
        expect((refused as Error).message).toStartWith(
          `POST ${origin}/api/v4/transactions/search: TLS certificate not trusted (`,
        );
        expect((refused as Error).message).toEndWith(
          "set SVC_INSECURE_TLS=1 to skip verification for a private or self-signed certificate",
        );
        expect(seen).toEqual([]);
        expect(await client(true).post("/transactions/search", {})).toMatchObject({ data: { items: [{ id: 1 }] } });
        expect(seen).toEqual(["POST /api/v4/transactions/search Bearer jwt-x"]);

        // svc agent follows the same variable.
        const strict = await runAgent(["health", "--host", origin], captureIo({})).catch((e: Error) => e);
        expect((strict as Error).message).toContain("SVC_INSECURE_TLS=1");
        for (const v of ["1", "true", "yes"]) {
          const io = captureIo({ SVC_INSECURE_TLS: v });
          expect(await runAgent(["health", "--host", origin], io)).toBe(0);
          expect(io.text()).toStartWith("status                ok\n");
        }
        const no = await runAgent(["health", "--host", origin], captureIo({ SVC_INSECURE_TLS: "0" })).catch(
          (e: Error) => e,
        );
        expect(no).toBeInstanceOf(Error);
      } finally {
        await server.stop(true);
      }
    },
    20_000,
  );
});
