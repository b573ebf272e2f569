/**
 * A control API without `api_token` or `auth` listens on loopback only (docs/LOADGEN.md "Control
 * API"): elsewhere the run and `loadgen profile check` stop with one line naming the keys; on
 * loopback the run starts and warns once on stderr; with a token it starts without a warning.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { planFromArgv, runLoadgen, startControlApi, startPlan, type LoadgenIo } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  const io: LoadgenIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

async function run(argv: string[]) {
  const c = captureIo();
  const code = await runLoadgen(argv, c.io);
  return { code, out: c.out, err: c.err };
}

const NAMES_THE_KEYS =
  /^loadgen: api_addr \S+ listens beyond loopback without api_token or auth: set api_token \(-api_token\) or auth \(type internal\), or bind 127\.0\.0\.1$/;

describe("loadgen control API exposure", () => {
  test.each([[":0"], ["0.0.0.0:0"], ["[::]:0"], ["192.0.2.1:0"], ["api.example.com:0"]])(
    "-api_addr %s without api_token or auth exits 2 before listening",
    async (addr) => {
      const r = await run(["server", "-sn", "uas", "-p", "0", "-api_addr", addr]);
      expect(r.code).toBe(2);
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(NAMES_THE_KEYS);
      expect(r.out).toEqual([]);
    },
  );

  test("startControlApi itself refuses to listen beyond loopback without a token or users", () => {
    expect(() => startControlApi("0.0.0.0:0", "", [])).toThrow("listens beyond loopback without api_token or auth");
  });

  test("profile check refuses an open control API beyond loopback, and accepts it with api_token", async () => {
    await using dir = tempDir("svc-loadgen-exposure-");
    const file = join(dir.path, "flat.json");
    writeFileSync(file, JSON.stringify({ scenario_name: "uas", local_port: 0, api_addr: ":8080" }));
    const open = await run(["profile", "check", file]);
    expect(open.code).toBe(2);
    expect(open.err).toHaveLength(1);
    expect(open.err[0]).toContain("listens beyond loopback without api_token or auth");
    writeFileSync(
      file,
      JSON.stringify({ scenario_name: "uas", local_port: 0, api_addr: ":8080", api_token: "tok-exposure" }),
    );
    const tokened = await run(["profile", "check", file]);
    expect([tokened.code, tokened.err]).toEqual([0, []]);
    // Management mode's default control API is loopback, so a profile without api_addr passes.
    writeFileSync(file, JSON.stringify({ scenario_name: "uas", local_port: 0 }));
    const byDefault = await run(["profile", "check", file]);
    expect([byDefault.code, byDefault.err, byDefault.out]).toEqual([
      0,
      [],
      ["engine server: mode=management scenario=uas transport=u1 binds=udp/127.0.0.1:0 api=127.0.0.1:8080"],
    ]);
  });

  test("on loopback without api_token or auth the run starts and warns once; with api_token it does not warn", async () => {
    for (const [argv, warnings] of [
      [[], 1],
      [["-api_token", "tok-exposure"], 0],
    ] as const) {
      const plan = planFromArgv([
        "server",
        "-sn",
        "uas",
        "-i",
        "127.0.0.1",
        "-p",
        "0",
        "-api_addr",
        "127.0.0.1:0",
        ...argv,
      ]);
      if (!("engines" in plan)) throw new Error("expected a run plan");
      const c = captureIo();
      const running = await startPlan(plan, c.io);
      try {
        const res = await fetch(`http://127.0.0.1:${running.api!.port}/api/v1/stats`, {
          headers: { authorization: "Bearer tok-exposure" },
        });
        expect(res.status).toBe(200);
        expect(c.err).toHaveLength(warnings);
        if (warnings)
          expect(c.err[0]).toBe(
            "loadgen: warning: the control API on 127.0.0.1:0 has no api_token or auth; any local user or process can control this run",
          );
      } finally {
        await running.stop();
        await running.finished;
      }
    }
  });
});
