/**
 * `loadgen tui` and `loadgen shell` (docs/LOADGEN.md "tui and shell"): terminal clients of a running
 * loadgen's control API. `tui` redraws the counters every `-interval`; `shell` reads commands
 * (stats, rate, pause, resume, scenario, listeners, listener, transport, users, useradd, userdel,
 * passwd, help, quit) one per line.
 */
import { call, logIn, parseClientFlags } from "./control-client-http.ts";
import { PRIMARY_COMMANDS, runPrimaryCommand } from "./control-client-primary.ts";
import { runUserCommand, USER_COMMANDS } from "./control-client-users.ts";
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

type StatsBody = LoadgenStats | { multi: true; engines: Array<{ id: string; stats: LoadgenStats }> };

const frame = (b: StatsBody): string[] =>
  "multi" in b ? b.engines.map((e) => statsLine(e.stats, e.id)) : [statsLine(b)];

export async function runTui(argv: readonly string[], io: ClientIo): Promise<number> {
  const f = parseClientFlags("tui", argv);
  await logIn(f);
  for (let n = 1; ; n++) {
    const lines = frame((await call(f, "/api/v1/stats")) as StatsBody);
    // ESC[H ESC[2J: cursor home and clear, so the counters redraw in place on a terminal.
    if (io.tty) io.out(`\u001b[H\u001b[2J${lines.join("\n")}`);
    else for (const l of lines) io.out(l);
    if (f.count > 0 && n >= f.count) return 0;
    await Bun.sleep(f.intervalMs);
  }
}

const SHELL_HELP =
  "commands: stats | rate <calls per period> | pause | resume | scenario <name> | listeners | listener <index> on|off | transport <udp|tcp|tls> on|off | users | useradd <name> [admin] | userdel <name> | passwd <name> | help | quit";

export async function runShell(argv: readonly string[], io: ClientIo): Promise<number> {
  const f = parseClientFlags("shell", argv);
  await logIn(f);
  const lines = ((io.lines ?? console) as AsyncIterable<string>)[Symbol.asyncIterator]();
  const nextLine = async () => {
    const r = await lines.next();
    return r.done ? undefined : r.value.replace(/\r$/, "");
  };
  let failed = false;
  for (let raw = await nextLine(); raw !== undefined; raw = await nextLine()) {
    const [cmd = "", ...args] = raw.trim().split(/\s+/);
    try {
      if (cmd === "" || cmd.startsWith("#")) continue;
      if (cmd === "quit" || cmd === "exit") break;
      if (cmd === "help") io.out(SHELL_HELP);
      else if (cmd === "stats") for (const l of frame((await call(f, "/api/v1/stats")) as StatsBody)) io.out(l);
      else if (cmd === "pause" || cmd === "resume")
        io.out(JSON.stringify(await call(f, "/api/v1/control", { pause: cmd === "pause" })));
      else if (cmd === "rate") {
        const rate = Number(args[0]);
        if (args.length !== 1 || !Number.isFinite(rate) || rate < 0) throw new Error("rate needs one number ≥ 0");
        io.out(JSON.stringify(await call(f, "/api/v1/control", { rate })));
      } else if (USER_COMMANDS.includes(cmd)) await runUserCommand(f, cmd, args, nextLine, io.out);
      else if (PRIMARY_COMMANDS.includes(cmd)) await runPrimaryCommand(f, cmd, args, io.out);
      else throw new Error(`unknown command "${cmd}" (${SHELL_HELP})`);
    } catch (e) {
      failed = true;
      io.err(`loadgen shell: ${(e as Error).message}`);
    }
  }
  return failed ? 1 : 0;
}
