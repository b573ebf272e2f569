/**
 * End-to-end against the real single executable (docs/INSTALL.md "How the single executable runs"):
 * built once by `make build` into a temp dir (binary-under-test.ts), or taken from SVC_TEST_BINARY
 * (.ci/run sets it after `make build` in a clean clone). Every listener is on 127.0.0.1:0 and every
 * data path in a temp dir, so the suite never needs a free well-known port and the executable
 * never writes into the tree or ~/.cache.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { dirname, join } from "node:path";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { binaryUnderTest, ROOT } from "./binary-under-test.ts";
import { isolatedServeEnv } from "./serve-env.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { invite } from "../fixtures/sip.ts";

const VERSION = String((await Bun.file(join(ROOT, "package.json")).json()).version);

let work: TempDir;
let binary = "";
let builtRevision: string | undefined;

beforeAll(async () => {
  work = tempDir("svc-e2e-binary-");
  const built = await binaryUnderTest();
  binary = built.path;
  builtRevision = built.revision;
}, 180_000);

afterAll(async () => {
  await work?.[Symbol.asyncDispose]();
});

/** The caller's environment without SVC_* settings or a library path, plus what the test decides. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v === undefined ||
      k.startsWith("SVC_") ||
      k === "LD_LIBRARY_PATH" ||
      k === "LD_PRELOAD" ||
      k === "INVOCATION_ID"
    )
      continue;
    env[k] = v;
  }
  return { ...env, SVC_RUNTIME_CACHE_DIR: join(work.path, "cache"), SVC_LOG_FORMAT: "json", ...extra };
}

/** Every listener on an ephemeral loopback port, every data file under `dir`. */
function serveEnv(dir: string): Record<string, string> {
  return cleanEnv(isolatedServeEnv(dir));
}

async function run(args: string[], cwd: string, env: Record<string, string>) {
  const proc = Bun.spawn([binary, ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

/** Collects a stream's lines as they arrive, so a test can wait for one without sleeping. */
function collectLines(stream: ReadableStream<Uint8Array>): string[] {
  const lines: string[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      lines.push(...parts);
    }
    if (pending) lines.push(pending);
  })();
  return lines;
}

function parseJsonLine(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

describe("dist/svc, the single executable", () => {
  test("is one file and prints version and git revision from another directory", async () => {
    if (!process.env.SVC_TEST_BINARY) expect(readdirSync(dirname(binary))).toEqual(["svc"]);
    await using elsewhere = tempDir("svc-e2e-cwd-");
    const { stdout, stderr, code } = await run(["version"], elsewhere.path, cleanEnv({}));
    expect(stderr).toBe("");
    expect(stdout).toMatch(new RegExp(`^svc ${VERSION.replaceAll(".", "\\.")} \\(([0-9a-f]{7,}|unknown)\\) bun `));
    if (builtRevision) expect(stdout).toContain(`(${builtRevision})`);
    expect(code).toBe(0);
    // Nothing is written into the working directory.
    expect(readdirSync(elsewhere.path)).toEqual([]);
    // `svc --version` is the same line.
    const dashed = await run(["--version"], elsewhere.path, cleanEnv({}));
    expect(dashed.stdout).toBe(stdout);
    expect(dashed.code).toBe(0);
  });

  test("extracts the embedded libduckdb.so into the runtime cache when the lake opens, versioned by content hash", async () => {
    await using elsewhere = tempDir("svc-e2e-cwd-");
    const cache = join(elsewhere.path, "cache");
    const env = { ...serveEnv(elsewhere.path), SVC_RUNTIME_CACHE_DIR: cache };
    // Not for a command without the lake: DuckDB loads in phase two of `svc serve`, after the logins
    // answer (docs/ARCHITECTURE.md "Start-up", docs/PLATFORM.md "One executable with DuckDB inside").
    expect((await run(["version"], elsewhere.path, env)).code).toBe(0);
    expect(existsSync(cache)).toBe(false);
    const proc = Bun.spawn([binary, "serve"], {
      cwd: elsewhere.path,
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const lines = collectLines(proc.stderr);
    try {
      await Promise.race([
        waitFor("the started line", () => lines.map(parseJsonLine).find((l) => l?.msg === "svc started"), 30_000),
        proc.exited.then((c) => {
          throw new Error(`svc exited ${c} before it started:\n${lines.join("\n")}`);
        }),
      ]);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const folders = readdirSync(cache);
    expect(folders).toHaveLength(1);
    expect(folders[0]).toMatch(/^libduckdb-[0-9a-z]+$/);
    const extracted = join(cache, folders[0]!, "libduckdb.so");
    const shipped = join(ROOT, "node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so");
    expect(statSync(extracted).size).toBe(statSync(shipped).size);
    // No temporary leftovers from the atomic write.
    expect(readdirSync(join(cache, folders[0]!))).toEqual(["libduckdb.so"]);
  });

  test("a cache directory that cannot be written stops serve when its lake starts, naming the directory", async () => {
    await using dir = tempDir("svc-e2e-nocache-");
    // A path under a regular file: no user, root included, can create it.
    writeFileSync(join(dir.path, "file"), "");
    const cache = join(dir.path, "file", "cache");
    const { stderr, code } = await run(["serve"], dir.path, { ...serveEnv(dir.path), SVC_RUNTIME_CACHE_DIR: cache });
    expect(code).toBe(1);
    // The driver could not load: said as such, not as a DuckDB tuning key it refused (src/lake/engine.ts).
    expect(stderr).toContain(`svc: cannot extract libduckdb.so to ${cache}`);
    expect(stderr).not.toContain("refused by DuckDB");
  });

  test("serve listens where SVC_COORDINATOR_HTTP_SERVER_LISTEN says, answers /metrics, exits 0 on SIGTERM", async () => {
    await using dir = tempDir("svc-e2e-serve-");
    const proc = Bun.spawn([binary, "serve"], {
      cwd: dir.path,
      env: serveEnv(dir.path),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const lines = collectLines(proc.stderr);
    try {
      const listening = await Promise.race([
        waitFor(
          "the coordinator's listening log line",
          () => lines.map(parseJsonLine).find((l) => l?.msg === "listening" && l.module === "coordinator-http"),
          30_000,
        ),
        proc.exited.then((c) => {
          throw new Error(`svc exited ${c} before listening:\n${lines.join("\n")}`);
        }),
      ]);
      // The coordinator answers first; the lake and the HEP listeners start behind it, and "svc
      // started" says both phases ran (docs/ARCHITECTURE.md "Start-up"). The banner is out by then.
      await Promise.race([
        waitFor(
          "the first-run banner and the started line",
          () =>
            lines.find((l) => l.startsWith("   svc reset-admin-password")) &&
            lines.map(parseJsonLine).find((l) => l?.msg === "svc started"),
          30_000,
        ),
        proc.exited.then((c) => {
          throw new Error(`svc exited ${c} before listening:\n${lines.join("\n")}`);
        }),
      ]);
      const address = String(listening.address);
      expect(address).toMatch(/^127\.0\.0\.1:[1-9][0-9]*$/);

      // The dashboard embedded by `make build`, served from far outside the tree.
      const page = await fetch(`http://${address}/`);
      const html = await page.text();
      expect(html).toContain('<meta name="svc-api-base" content="/api/v4">');
      expect(html).not.toContain("source run");
      expect(page.status).toBe(200);
      const appJs = /src="(\/assets\/app\.js\?v=[0-9a-f]{8})"/.exec(html)?.[1];
      expect(appJs).toBeDefined();
      const js = await fetch(`http://${address}${appJs}`);
      expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(js.headers.get("cache-control")).toContain("immutable");
      expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
      expect((await fetch(`http://${address}/assets/app.css`)).status).toBe(200);

      // First start: the plain banner on stderr with the user, the password and this URL.
      const banner = (key: string) =>
        lines.map((l) => new RegExp(`^ {3}${key}: +(\\S+)$`).exec(l)?.[1]).find((v) => v !== undefined);
      expect(banner("URL")).toBe(`http://${address}/`);
      expect(banner("user")).toBe("admin");
      const password = banner("password") ?? "";
      expect(password).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      const login = await fetch(`http://${address}/api/v4/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password }),
      });
      expect(login.status).toBe(201);
      // The banner is the only place: no JSON log line carries it.
      expect(lines.filter((l) => parseJsonLine(l) !== undefined && l.includes(password))).toEqual([]);
      expect(lines).toContain("   svc reset-admin-password");

      const res = await fetch(`http://${address}/metrics`);
      const body = await res.text();
      expect(body).toContain(`svc_build_info{version="${VERSION}"} 1`);
      expect(body).toContain("process_resident_memory_bytes ");
      expect(res.status).toBe(200);

      // HEP over UDP reaches the ingest thread, whose entry point is bundled separately.
      const udp = lines.map(parseJsonLine).find((l) => l?.msg === "listening" && l.module === "hep-udp");
      expect(udp?.thread).toBe("ingest");
      // The batch reader (recvmmsg through bun:ffi) works inside the executable too.
      if (process.platform === "linux") expect(udp?.reader).toBe("recvmmsg");
      const sock = await Bun.udpSocket({});
      const packet = encodeHep3({
        srcIp: "192.0.2.1",
        dstIp: "192.0.2.2",
        timestampUs: Date.now() * 1000,
        protoType: 1,
        payload: invite({ callId: "binary-e2e@x", from: "a", to: "b" }),
      });
      sock.send(packet, Number(String(udp!.address).split(":").pop()), "127.0.0.1");
      const accepted = await waitFor(
        "the packet counted as a stored row",
        async () =>
          /svc_hep_rows_accepted_total\{table="main\.hep_proto_1_call"\} 1\b/.test(
            await (await fetch(`http://${address}/metrics`)).text(),
          ) || undefined,
        10_000,
      );
      expect(accepted).toBe(true);
      sock.close();

      proc.kill("SIGTERM");
      // systemd's TimeoutStopSec is generous, but an idle appliance must stop within 5 s.
      const code = await Promise.race([proc.exited, Bun.sleep(5_000).then(() => "still running after SIGTERM + 5 s")]);
      expect(code).toBe(0);
      expect(lines.map(parseJsonLine).some((l) => l?.msg === "stopped" && l.clean === true)).toBe(true);
      // Start-up and shutdown (the lake opens DuckDB through the unpacked library) log no error.
      expect(lines.filter((l) => parseJsonLine(l)?.level === "error")).toEqual([]);
    } finally {
      if (proc.exitCode === null) proc.kill("SIGKILL");
    }
  }, 60_000);

  test("compaction cuts merged files into pages in its worker thread, bundled into the executable", async () => {
    await using dir = tempDir("svc-e2e-pages-");
    const proc = Bun.spawn([binary, "serve"], {
      cwd: dir.path,
      env: {
        ...serveEnv(dir.path),
        SVC_STORAGE_LAKEHOUSE_FLUSH_INTERVAL_SEC: "0.2",
        SVC_STORAGE_LAKEHOUSE_COMPACTION_MIN_AGE_SEC: "0",
        SVC_STORAGE_LAKEHOUSE_COMPACTION_CHECK_INTERVAL_SEC: "1",
        SVC_STORAGE_LAKEHOUSE_COMPACTION_ROWS_PER_PAGE: "2",
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const lines = collectLines(proc.stderr);
    const sock = await Bun.udpSocket({});
    try {
      const udp = await Promise.race([
        waitFor(
          "the HEP/UDP listener",
          () => lines.map(parseJsonLine).find((l) => l?.msg === "listening" && l.module === "hep-udp"),
          30_000,
        ),
        proc.exited.then((c) => {
          throw new Error(`svc exited ${c}:\n${lines.join("\n")}`);
        }),
      ]);
      const port = Number(String(udp.address).split(":").pop());
      // Batches apart in time: several flush files, which the next cycle merges.
      const merged = await waitFor(
        "a merged file with an offset index",
        async () => {
          for (let i = 0; i < 5; i++)
            sock.send(
              encodeHep3({
                srcIp: "192.0.2.1",
                dstIp: "192.0.2.2",
                timestampUs: Date.now() * 1000,
                protoType: 1,
                payload: invite({ callId: `pages-${crypto.randomUUID()}@x`, from: "a", to: "b" }),
              }),
              port,
              "127.0.0.1",
            );
          for (const rel of new Bun.Glob("**/*.parquet").scanSync({ cwd: join(dir.path, "lake") })) {
            const file = await asyncBufferFromFile(join(dir.path, "lake", rel));
            const md = await parquetMetadataAsync(file).catch(() => undefined);
            const payload = md?.row_groups[0]?.columns.find((c) => c.meta_data?.path_in_schema[0] === "payload");
            if (payload?.offset_index_offset !== undefined && Number(md!.num_rows) > 2) return rel;
          }
          return undefined;
        },
        30_000,
      );
      expect(merged).toContain("hep_proto_1_call");
      // Cut in the worker: the main thread never had to do it.
      expect(lines.filter((l) => l.includes("page cutter"))).toEqual([]);
      expect(lines.filter((l) => parseJsonLine(l)?.level === "error")).toEqual([]);
    } finally {
      sock.close();
      if (proc.exitCode === null) proc.kill("SIGKILL");
    }
  }, 60_000);

  test("an executable compiled without the dashboard says how to rebuild it, never 'source run'", async () => {
    // Only make build / scripts/build.ts embed ui-dist; a hand-made `bun build --compile` does not.
    await using dir = tempDir("svc-e2e-noui-");
    const entry = join(dir.path, "entry.ts");
    writeFileSync(
      entry,
      [
        `import { uiRoutes } from ${JSON.stringify(join(ROOT, "src/api/ui/index.ts"))};`,
        `const app = uiRoutes({ apiPrefix: "" });`,
        `await app.modules;`,
        `const r = await app.handle(new Request("http://localhost/"));`,
        `console.log(r.status + "\\n" + (await r.text()));`,
      ].join("\n"),
    );
    const out = join(dir.path, "no-ui");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", entry, `--outfile=${out}`], {
      cwd: dir.path,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(build.stderr.toString()).not.toContain("error");
    expect(build.exitCode).toBe(0);
    const proc = Bun.spawn([out], { cwd: dir.path, env: cleanEnv({}), stdout: "pipe", stderr: "pipe" });
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(stdout).toStartWith("503\n");
    expect(stdout).toContain("This executable was compiled without the dashboard");
    expect(stdout).toContain("make build");
    expect(stdout).not.toContain("source run");
    expect(code).toBe(0);
  }, 60_000);

  test("a config file with an unknown key fails at start-up naming the key", async () => {
    await using dir = tempDir("svc-e2e-config-");
    const path = join(dir.path, "svc.json");
    await Bun.write(
      path,
      `{\n  // comments are fine, unknown keys are not\n  "coordinator": { "http_server": { "listen": "127.0.0.1:0" }, "no_such_key": 1 }\n}\n`,
    );
    const { stdout, stderr, code } = await run(["serve", "--config-path", path], dir.path, serveEnv(dir.path));
    expect(stderr).toContain("coordinator.no_such_key: unknown key");
    expect(stdout).toBe("");
    expect(code).toBe(2);
  });

  test("the shipped appliance/svc.json (JSONC) is a valid configuration", async () => {
    await using dir = tempDir("svc-e2e-appliance-");
    // SVC_RUNTIME_CACHE_DIR (set by cleanEnv) wins over the file's /var/cache/svc, as in the unit.
    const { stdout, stderr, code } = await run(
      ["show-config", "--config-path", join(ROOT, "appliance/svc.json")],
      dir.path,
      cleanEnv({}),
    );
    expect(stderr).toBe("");
    const shown = JSON.parse(stdout) as {
      storage: { lakehouse: { data_path: string } };
      coordinator: { settings_db_path: string };
    };
    expect(shown.storage.lakehouse.data_path).toBe("/var/lib/svc/lake/");
    expect(shown.coordinator.settings_db_path).toBe("/var/lib/svc/settings.db");
    expect(code).toBe(0);
  });

  test("an unknown flag is a usage error, exit 2", async () => {
    await using dir = tempDir("svc-e2e-flag-");
    const { stderr, code } = await run(["serve", "--no-such-flag"], dir.path, serveEnv(dir.path));
    expect(stderr).toContain(`unknown flag "--no-such-flag"`);
    expect(code).toBe(2);
  });
});
