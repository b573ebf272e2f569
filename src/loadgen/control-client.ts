/**
 * `loadgen tui` and `loadgen shell` (docs/LOADGEN.md "tui and shell"): terminal clients of a running
 * loadgen's control API. `tui` redraws the counters every `-interval`; `shell` reads commands
 * (stats, rate <n>, pause, resume, help, quit) one per line.
 */
import { LoadgenUsageError, parseDuration } from "./options.ts";
import type { LoadgenStats } from "./stats.ts";
import { statsLine } from "./stats.ts";

export interface ClientIo {
  out(line: string): void;
  err(line: string): void;
  /** Whether stdout is a terminal (the tui then clears the screen between frames). */
  tty?: boolean;
  /** Command lines for `shell` (stdin by default). */
  lines?: AsyncIterable<string>;
}

interface ClientFlags {
  base: string;
  token: string;
  intervalMs: number;
  count: number;
}

function parseClientFlags(sub: string, argv: readonly string[]): ClientFlags {
  const f: ClientFlags = { base: "http://127.0.0.1:8080", token: "", intervalMs: 1000, count: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--?([a-z_]+)(?:=(.*))?$/.exec(a);
    const value = () => {
      const v = m?.[2] ?? argv[++i];
      if (v === undefined) throw new LoadgenUsageError(`${a} needs a value`);
      return v;
    };
    switch (m?.[1]) {
      case "api_addr": {
        const v = value();
        f.base = /^https?:\/\//.test(v) ? v.replace(/\/$/, "") : `http://${v.startsWith(":") ? `127.0.0.1${v}` : v}`;
        break;
      }
      case "api_token":
        f.token = value();
        break;
      case "interval":
        f.intervalMs = parseDuration(value());
        if (f.intervalMs < 100) throw new LoadgenUsageError("-interval must be at least 100ms");
        break;
      case "count": {
        const v = value();
        if (!/^\d+$/.test(v)) throw new LoadgenUsageError(`-count needs a whole number, got "${v}"`);
        f.count = Number(v);
        break;
      }
      default:
        throw new LoadgenUsageError(`unknown ${sub} flag ${a} (-api_addr, -api_token${sub === "tui" ? ", -interval, -count" : ""})`);
    }
  }
  return f;
}

type StatsBody = LoadgenStats | { multi: true; engines: Array<{ id: string; stats: LoadgenStats }> };

async function call(f: ClientFlags, path: string, body?: unknown): Promise<unknown> {
  let r: Response;
  try {
    r = await fetch(`${f.base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...(f.token ? { authorization: `Bearer ${f.token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new Error(`cannot reach the control API at ${f.base} (${(e as Error).message})`);
  }
  const json = (await r.json().catch(() => ({}))) as { message?: string };
  if (!r.ok) throw new Error(`control API ${r.status}: ${json.message ?? r.statusText}`);
  return json;
}

const frame = (b: StatsBody): string[] => ("multi" in b ? b.engines.map((e) => statsLine(e.stats, e.id)) : [statsLine(b)]);

export async function runTui(argv: readonly string[], io: ClientIo): Promise<number> {
  const f = parseClientFlags("tui", argv);
  for (let n = 1; ; n++) {
    const lines = frame((await call(f, "/api/v1/stats")) as StatsBody);
    // ESC[H ESC[2J: cursor home and clear, so the counters redraw in place on a terminal.
    if (io.tty) io.out(`\u001b[H\u001b[2J${lines.join("\n")}`);
    else for (const l of lines) io.out(l);
    if (f.count > 0 && n >= f.count) return 0;
    await Bun.sleep(f.intervalMs);
  }
}

const SHELL_HELP = "commands: stats | rate <calls per period> | pause | resume | help | quit";

export async function runShell(argv: readonly string[], io: ClientIo): Promise<number> {
  const f = parseClientFlags("shell", argv);
  const lines = io.lines ?? console;
  let failed = false;
  for await (const raw of lines as AsyncIterable<string>) {
    const [cmd = "", ...args] = raw.trim().split(/\s+/);
    try {
      if (cmd === "" || cmd.startsWith("#")) continue;
      if (cmd === "quit" || cmd === "exit") break;
      if (cmd === "help") io.out(SHELL_HELP);
      else if (cmd === "stats") for (const l of frame((await call(f, "/api/v1/stats")) as StatsBody)) io.out(l);
      else if (cmd === "pause" || cmd === "resume") io.out(JSON.stringify(await call(f, "/api/v1/control", { pause: cmd === "pause" })));
      else if (cmd === "rate") {
        const rate = Number(args[0]);
        if (args.length !== 1 || !Number.isFinite(rate) || rate < 0) throw new Error("rate needs one number ≥ 0");
        io.out(JSON.stringify(await call(f, "/api/v1/control", { rate })));
      } else throw new Error(`unknown command "${cmd}" (${SHELL_HELP})`);
    } catch (e) {
      failed = true;
      io.err(`loadgen shell: ${(e as Error).message}`);
    }
  }
  return failed ? 1 : 0;
}
