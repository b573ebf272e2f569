/**
 * The compiled executable answers as loadgen when started through the link appliance/install.sh
 * creates (docs/LOADGEN.md), and as `svc loadgen`: both run calls against a loadgen UAS.
 */
import { describe, expect, test } from "bun:test";
import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_OPTIONS, Engine } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";
import { binaryUnderTest, ROOT } from "./binary-under-test.ts";

describe("loadgen link", () => {
  test("install.sh links loadgen to svc; both names run calls", async () => {
    const bin = await binaryUnderTest();
    await using dir = tempDir("svc-loadgen-link-");
    const stage = join(dir.path, "stage");
    const install = Bun.spawnSync([join(ROOT, "appliance/install.sh"), "--binary", bin.path, "--no-start"], {
      env: { ...process.env, DESTDIR: stage },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(install.stderr.toString()).toBe("");
    expect(install.exitCode).toBe(0);
    const link = join(stage, "usr/local/bin/loadgen");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("svc");

    const uas = new Engine({
      opts: { ...DEFAULT_OPTIONS, listeners: [], scenario_name: "uas", local_port: 0 },
      mode: "management",
    });
    await uas.start();
    try {
      const env = { ...process.env, SVC_RUNTIME_CACHE_DIR: join(dir.path, "cache") };
      for (const cmd of [[link], [join(stage, "usr/local/bin/svc"), "loadgen"]]) {
        const summary = join(dir.path, `summary-${cmd.length}.json`);
        const proc = Bun.spawn(
          [...cmd, "-sn", "uac", `127.0.0.1:${uas.binds[0]!.port}`, "-r", "50", "-m", "3", "-summary_json", summary],
          { env, stdout: "pipe", stderr: "pipe" },
        );
        const [out, err, code] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ]);
        expect(err).toBe("");
        expect(out).toContain("ok=3 failed=0");
        expect(JSON.parse(readFileSync(summary, "utf8")).calls_successful).toBe(3);
        expect(code).toBe(0);
      }
      // Management mode runs until SIGTERM, then prints its final line and exits 0.
      const server = Bun.spawn([link, "server", "-p", "0", "-api_addr", "127.0.0.1:0"], {
        env,
        stdout: "pipe",
        stderr: "pipe",
      });
      const reader = server.stdout.getReader();
      let seen = "";
      while (!seen.includes("control API on port")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      const apiPort = /control API on port (\d+)/.exec(seen)?.[1];
      expect(((await (await fetch(`http://127.0.0.1:${apiPort}/api/v1/stats`)).json()) as { mode: string }).mode).toBe(
        "management",
      );
      server.kill("SIGTERM");
      const serverCode = await server.exited;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      expect(seen).toMatch(/loadgen \S+s uas: created=0 .* ok=0 failed=0/);
      expect(serverCode).toBe(0);

      const help = Bun.spawnSync([link, "-h"], { env, stdout: "pipe" });
      expect(help.stdout.toString()).toStartWith("loadgen: SIP load generator");
      const bad = Bun.spawnSync([link, "-config", "x.json"], { env, stdout: "pipe", stderr: "pipe" });
      expect(bad.stderr.toString().trim()).toBe(
        "loadgen: -config needs -run-alias <name> (or -list-aliases); a flat profile runs with: loadgen server -config <file>",
      );
      expect(bad.exitCode).toBe(2);
    } finally {
      await uas.stop();
    }
  }, 600_000);
});
