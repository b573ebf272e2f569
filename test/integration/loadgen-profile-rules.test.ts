/**
 * Run-profile rules over real files through runLoadgen (docs/LOADGEN.md "Run profiles", "Media and
 * RTCP reports"): report switches without hep_addr, per engine; errors of one engine of a composite
 * file name it; relative TLS files against the profile's folder, summary_json against the working
 * directory.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLoadgen, type LoadgenIo } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";
import { selfSignedCert } from "../peers/tls.ts";
import { freePort } from "../peers/process.ts";

const ROOT = join(import.meta.dir, "../..");

/** The real entry point as a process, started in `cwd`. */
async function spawnLoadgen(argv: string[], cwd: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "loadgen", ...argv], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: LoadgenIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  const code = await runLoadgen(argv, io);
  return { code, out, err };
}

describe("loadgen profiles: report switches need hep_addr", () => {
  test.each(["hep_raw_rtcp", "hep_homer_lake_rtcp", "send_media_report"])(
    "%s without hep_addr is refused in a flat profile and in one engine of a composite file",
    async (key) => {
      await using dir = tempDir("svc-loadgen-rules-");
      const file = join(dir.path, "p.json");
      writeFileSync(file, JSON.stringify({ remote_addr: "127.0.0.1:5999", total_calls: 1, [key]: true }));
      const flat = await run(["server", "-config", file]);
      expect(flat.err).toHaveLength(1);
      expect(flat.err[0]).toMatch(new RegExp(`^loadgen: ${key} needs hep_addr `));
      expect(flat.code).toBe(2);
      // The server mirrors (hep_addr, not reachable: nothing is sent before the check), the client does not.
      writeFileSync(
        file,
        JSON.stringify({
          server: {
            scenario_name: "uas",
            local_port: 0,
            api_addr: "127.0.0.1:0",
            hep_addr: "127.0.0.1:9",
            [key]: true,
          },
          client: { remote_addr: "127.0.0.1:5999", [key]: true },
        }),
      );
      const composite = await run(["server", "-config", file]);
      expect(composite.err).toHaveLength(1);
      expect(composite.err[0]).toMatch(new RegExp(`^loadgen: client-1: ${key} needs hep_addr `));
      expect(composite.code).toBe(2);
      const check = await run(["profile", "check", file]);
      expect(check.err).toEqual([
        `loadgen: ${file}: engine client-1: ${key} needs hep_addr (the reports are sent as HEP; set -hep_addr host:port)`,
      ]);
      expect(check.code).toBe(2);
    },
  );
});

describe("loadgen profiles: relative paths", () => {
  test("listeners' tls_cert/tls_key are found next to the profile; summary_json is written in the working directory", async () => {
    await using dir = tempDir("svc-loadgen-rules-");
    const profiles = join(dir.path, "profiles");
    const work = join(dir.path, "work");
    mkdirSync(profiles);
    mkdirSync(work);
    selfSignedCert(profiles, "127.0.0.1");
    const port = freePort();
    writeFileSync(
      join(profiles, "tls.json"),
      JSON.stringify({
        server: {
          scenario_name: "uas",
          listeners: [{ transport: "l1", local_port: port, tls_cert: "cert.pem", tls_key: "key.pem" }],
          api_addr: "127.0.0.1:0",
          // A token keeps stderr free of the open-API warning (docs/LOADGEN.md "Control API").
          api_token: "tok-rules",
          total_calls: 2,
          summary_json: "server.json",
        },
        client: {
          remote_addr: `127.0.0.1:${port}`,
          transport: "l1",
          total_calls: 2,
          rate: 20,
          summary_json: "client.json",
        },
      }),
    );
    const check = await spawnLoadgen(["profile", "check", "../profiles/tls.json"], work);
    expect({ err: check.err, code: check.code }).toEqual({ err: "", code: 0 });
    // Two TLS calls from the client engine to the server's listener, run from another folder.
    const r = await spawnLoadgen(["server", "-config", "../profiles/tls.json"], work);
    expect({ err: r.err, code: r.code }).toEqual({ err: "", code: 0 });
    const summary = (name: string) =>
      JSON.parse(readFileSync(join(work, name), "utf8")) as { id: string; calls_successful: number };
    expect([summary("server.json"), summary("client.json")].map((x) => [x.id, x.calls_successful])).toEqual([
      ["server", 2],
      ["client-1", 2],
    ]);
    expect(existsSync(join(profiles, "server.json")) || existsSync(join(profiles, "client.json"))).toBe(false);
  }, 30_000);
});

describe("loadgen composite files: engine errors name the engine", () => {
  test("transport ui copied from the root into the server, and a bad client, are named in a run and in profile check", async () => {
    await using dir = tempDir("svc-loadgen-rules-");
    const file = join(dir.path, "c.json");
    writeFileSync(join(dir.path, "ips.csv"), "SEQUENTIAL\n127.0.0.1\n");
    writeFileSync(
      file,
      JSON.stringify({
        transport: "ui",
        injection_file: "ips.csv",
        server: { scenario_name: "uas", local_port: 0, api_addr: "127.0.0.1:0" },
        client: { remote_addr: "127.0.0.1:5999" },
      }),
    );
    const ui =
      "transport ui is for client scenarios (uac, register, options or a client -sf); a server answers on the address it listens on";
    const run1 = await run(["server", "-config", file]);
    expect({ err: run1.err, code: run1.code }).toEqual({ err: [`loadgen: server: ${ui}`], code: 2 });
    const check1 = await run(["profile", "check", file]);
    expect({ err: check1.err, code: check1.code }).toEqual({
      err: [`loadgen: ${file}: engine server: ${ui}`],
      code: 2,
    });
    writeFileSync(
      file,
      JSON.stringify({
        server: { scenario_name: "uas", local_port: 0, api_addr: "127.0.0.1:0" },
        clients: [{ remote_addr: "127.0.0.1:5999" }, { remote_addr: "127.0.0.1:5999", scenario_name: "invite" }],
      }),
    );
    const run2 = await run(["server", "-config", file]);
    expect({ err: run2.err, code: run2.code }).toEqual({
      err: ['loadgen: client-2: unknown scenario "invite" (built in: uac, uas, register, options)'],
      code: 2,
    });
    // A single engine's error needs no name.
    writeFileSync(file, JSON.stringify({ role: "load", remote_addr: "127.0.0.1:5999", scenario_name: "invite" }));
    const single = await run(["server", "-config", file]);
    expect(single.err).toEqual(['loadgen: unknown scenario "invite" (built in: uac, uas, register, options)']);
  });
});
