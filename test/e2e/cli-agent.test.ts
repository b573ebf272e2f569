/**
 * `svc agent` as a real process against a server with the documented agent API: the exit codes
 * (0, 1 for DEGRADED or an error, 2 for usage) and `watch`, which clears and redraws with fresh
 * counters every interval until SIGINT, then exits 0.
 */
import { describe, expect, test } from "bun:test";
import { tempDir, waitFor } from "../harness.ts";
import { ROOT, cliEnv, fakeAgent, runCli } from "./cli-harness.ts";

/** The first line of each frame, up to the agent URL. */
const HEAD = "svc agent watch";

/** A process's output as it arrives (`text()`), and all of it once the stream ends (`done`). */
function collect(stream: ReadableStream<Uint8Array>): { text(): string; done: Promise<string> } {
  let out = "";
  const dec = new TextDecoder();
  const done = (async () => {
    const r = stream.getReader();
    for (let c = await r.read(); !c.done; c = await r.read()) out += dec.decode(c.value, { stream: true });
    return out;
  })();
  return { text: () => out, done };
}

describe("svc agent (process)", () => {
  test("stats, health and their exit codes", async () => {
    await using home = tempDir("svc-cli-agent-");
    await using a = fakeAgent({ user: "agent", pass: "pw" });
    const env = cliEnv(home.path);
    const stats = await runCli(["agent", "--host", a.url, "--user", "agent", "--pass", "pw"], env);
    expect(stats.stdout).toContain("  hep_sent    1300\n");
    expect(stats.stdout).toContain("  homer.example.com:9060  tcp    yes        0           1300  0\n");
    expect([stats.stderr, stats.code]).toEqual(["", 0]);
    const ok = await runCli(["agent", "health", "--host", a.url], env);
    expect([ok.stdout.split("\n")[0], ok.code]).toEqual(["status                ok", 0]);
    a.set({ connected: false });
    const degraded = await runCli(["agent", "health", "--host", a.url], env);
    expect([degraded.stdout.split("\n")[0], degraded.code]).toEqual(["status                DEGRADED", 1]);
    const denied = await runCli(["agent", "stats", "--host", a.url], env);
    expect([denied.stdout, denied.stderr, denied.code]).toEqual([
      "",
      "svc: agent answered 401 on /api/stats: it needs --user and --pass (api_settings.user / pass)\n",
      1,
    ]);
    // The password kept out of ps: from SVC_PASSWORD or the first line of stdin.
    const fromEnv = await runCli(
      ["agent", "--host", a.url, "--user", "agent"],
      cliEnv(home.path, { SVC_PASSWORD: "pw" }),
    );
    expect(fromEnv.stdout).toContain("  hep_sent    1300\n");
    expect([fromEnv.stderr, fromEnv.code]).toEqual(["", 0]);
    const fromStdin = await runCli(["agent", "--host", a.url, "--user", "agent", "--pass-stdin"], env, "pw\n");
    expect(fromStdin.stdout).toContain("  hep_sent    1300\n");
    expect([fromStdin.stderr, fromStdin.code]).toEqual(["", 0]);
    const usage = await runCli(["agent", "restart", "--host", a.url], env);
    expect([usage.stderr, usage.code]).toEqual(['svc: unknown action "restart" (stats, health or watch)\n', 2]);
  });

  test("watch piped: a frame every --interval with fresh numbers and no control codes, SIGINT ends it with exit 0", async () => {
    await using home = tempDir("svc-cli-agent-");
    await using a = fakeAgent();
    const proc = Bun.spawn(
      [process.execPath, "src/main.ts", "agent", "watch", "--host", a.url, "--interval", "200ms"],
      { cwd: ROOT, env: cliEnv(home.path), stdout: "pipe", stderr: "pipe" },
    );
    const stdout = collect(proc.stdout);
    try {
      await waitFor("three frames", () => stdout.text().split(HEAD).length - 1 >= 3, 15_000);
    } finally {
      proc.kill("SIGINT");
    }
    const code = await proc.exited;
    const out = await stdout.done;
    expect(code).toBe(0);
    // Not a terminal: nothing clears the screen, the frames follow each other a blank line apart.
    expect(out).not.toContain("\x1b");
    const frames = out.split(HEAD).slice(1);
    expect(frames.length).toBeGreaterThanOrEqual(3);
    expect(out.split(HEAD)[0]).toBe("");
    for (const f of frames.slice(0, 3)) {
      expect(f).toMatch(
        new RegExp(`^ · ${a.url} · every 0.2s · \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z · Ctrl\\+C to stop\\n\\nNode\\n`),
      );
      expect(f).toContain("\nTransports\n");
    }
    // The agent's counter moves per request: each frame shows the poll it came from.
    const totals = frames.slice(0, 3).map((f) => Number(/ {2}total {7}(\d+)/.exec(f)![1]));
    expect(totals).toEqual([1500, 1501, 1502]);
    expect(await new Response(proc.stderr).text()).toBe("");
  });

  test("watch on a terminal: each frame clears the screen first", async () => {
    await using home = tempDir("svc-cli-agent-");
    await using a = fakeAgent();
    // util-linux script(1) runs the command on a pseudo-terminal.
    const cmd = `exec ${process.execPath} src/main.ts agent watch --host ${a.url} --interval 200ms`;
    const proc = Bun.spawn(["script", "-qefc", cmd, "/dev/null"], {
      cwd: ROOT,
      env: cliEnv(home.path),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const stdout = collect(proc.stdout);
    try {
      await waitFor("two frames", () => stdout.text().split(`\x1b[H\x1b[2J${HEAD}`).length - 1 >= 2, 15_000);
    } finally {
      proc.kill("SIGKILL");
    }
    await proc.exited;
    expect((await stdout.done).split(`\x1b[H\x1b[2J${HEAD}`).length - 1).toBeGreaterThanOrEqual(2);
  });
});
