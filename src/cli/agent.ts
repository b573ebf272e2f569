import { AppError, errorMessage } from "../core/index.ts";
import { UsageError, formatHelp, parseArgs, type FlagSpec } from "./args.ts";
import { baseUrl, httpRequest, insecureTlsFromEnv, serverMessage, type HttpOptions } from "./http.ts";
import type { CliIo } from "./io.ts";
import { passwordFrom } from "./secret-input.ts";
import { parseDuration } from "../core/index.ts";
import { terminalWidth } from "./views/columns.ts";
import { healthView, renderAgentStats, renderHealth } from "./views/agent.ts";

/**
 * `svc agent [stats|health|watch]` (docs/CLI.md "Capture-agent client"): reads a capture agent's
 * API, `GET /health` (always open) and `GET /api/stats` (optional HTTP Basic). Exit codes: 0, 1 on
 * an error, 2 on a usage error; `health` also exits 1 when the agent is DEGRADED, so it works as a
 * monitoring probe. `watch` redraws every --interval until interrupted, then exits 0.
 */
export const AGENT_FLAGS: FlagSpec[] = [
  {
    name: "host",
    type: "string",
    default: "127.0.0.1:8008",
    description: "agent API host:port (api_settings.addr); an https:// prefix selects TLS",
  },
  { name: "user", type: "string", description: "HTTP Basic user (api_settings.user)" },
  {
    name: "pass",
    type: "string",
    description: "HTTP Basic password (api_settings.pass); or SVC_PASSWORD, or --pass-stdin",
  },
  {
    name: "pass-stdin",
    type: "boolean",
    description: "read the password from stdin (first line; hidden on a terminal)",
  },
  { name: "interval", type: "string", default: "3s", description: "redraw interval of watch (e.g. 1s, 500ms, 1m)" },
  { name: "format", type: "string", default: "table", description: "table or json (json is the agent's raw answer)" },
  { name: "debug", type: "boolean", description: "print requests and responses to stderr" },
  { name: "help", alias: "h", type: "boolean", description: "show help" },
];

const ACTIONS: Array<[string, string]> = [
  ["stats", "node, packet counters and HEP transports (default)"],
  ["health", "ok, or DEGRADED when no HEP transport is connected (exit 1)"],
  ["watch", "redraw stats every --interval until Ctrl+C (on a terminal; piped, one frame after the other)"],
];

export const AGENT_HELP = formatHelp(
  "svc agent [stats|health|watch] [--host <host:port>] [--user <u> --pass <p>] [--format table|json]",
  "Read statistics and health from a running capture agent.",
  AGENT_FLAGS,
  ACTIONS,
);

interface AgentOptions {
  action: "stats" | "health" | "watch";
  base: string;
  authorization?: string;
  intervalMs: number;
  format: "table" | "json";
  http: HttpOptions;
}

async function agentOptions(argv: readonly string[], io: CliIo): Promise<AgentOptions | "help"> {
  const { flags, positionals } = parseArgs(argv, AGENT_FLAGS, { allowPositionals: true });
  if (flags.help) return "help";
  if (positionals.length > 1)
    throw new UsageError(`one action expected (stats, health or watch), got "${positionals.join(" ")}"`);
  const action = positionals[0] ?? "stats";
  if (action !== "stats" && action !== "health" && action !== "watch")
    throw new UsageError(`unknown action "${action}" (stats, health or watch)`);
  const format = String(flags.format).toLowerCase();
  if (format !== "table" && format !== "json")
    throw new UsageError(`--format must be table or json, got "${String(flags.format)}"`);
  const intervalMs = parseDuration(String(flags.interval));
  if (intervalMs === undefined || intervalMs < 100)
    throw new UsageError(`--interval must be a duration of at least 100ms (3s, 1m), got "${String(flags.interval)}"`);
  const user = flags.user as string | undefined;
  const pass = await passwordFrom(
    { pass: flags.pass as string | undefined, passStdin: flags["pass-stdin"] === true, user },
    io,
  );
  if (pass !== undefined && !user) throw new UsageError("--pass needs --user");
  return {
    action,
    base: baseUrl(String(flags.host)),
    ...(user ? { authorization: `Basic ${Buffer.from(`${user}:${pass ?? ""}`).toString("base64")}` } : {}),
    intervalMs,
    format,
    http: {
      insecureTls: insecureTlsFromEnv(io.env),
      timeoutMs: 10_000,
      ...(flags.debug ? { debug: (l: string) => void io.err(`${l}\n`) } : {}),
    },
  };
}

/** GET a JSON document from the agent; one-line errors naming the path and the cause. */
async function agentGet(o: AgentOptions, path: string): Promise<{ text: string; json: unknown }> {
  const r = await httpRequest(
    "GET",
    `${o.base}${path}`,
    o.http,
    o.authorization ? { headers: { authorization: o.authorization } } : {},
  );
  if (r.status === 401)
    throw new AppError(
      "UNAUTHORIZED",
      `agent answered 401 on ${path}: ${o.authorization ? "wrong --user or --pass" : "it needs --user and --pass (api_settings.user / pass)"}`,
    );
  if (r.status < 200 || r.status > 299)
    throw new AppError("BAD_GATEWAY", `GET ${path}: HTTP ${r.status} ${serverMessage(r)}`);
  if (r.json === undefined || r.json === null || typeof r.json !== "object")
    throw new AppError("BAD_GATEWAY", `GET ${path}: the answer is not a JSON object`);
  return { text: r.text, json: r.json };
}

const withNewline = (t: string) => (t.endsWith("\n") ? t : `${t}\n`);

async function statsText(o: AgentOptions, io: CliIo): Promise<string> {
  const r = await agentGet(o, "/api/stats");
  return o.format === "json"
    ? withNewline(r.text)
    : `${renderAgentStats(r.json, terminalWidth(io.env, io.columns)).join("\n")}\n`;
}

/** Redraws until SIGINT / SIGTERM; a failed poll is shown in the frame and retried next interval. */
async function watch(o: AgentOptions, io: CliIo): Promise<number> {
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    let running = true;
    let first = true;
    void stopped.then(() => (running = false));
    while (running) {
      let body: string;
      try {
        body = await statsText(o, io);
      } catch (e) {
        body = `error: ${errorMessage(e)}\n`;
      }
      if (!running) break;
      const head = `svc agent watch · ${o.base} · every ${o.intervalMs / 1000}s · ${new Date(io.now()).toISOString()} · Ctrl+C to stop`;
      // A terminal is cleared and redrawn; a pipe or a file gets the frames one after the other,
      // a blank line apart, with no control codes in them.
      await io.out(io.stdout.isTTY ? `${CLEAR_SCREEN}${head}\n\n${body}` : `${first ? "" : "\n"}${head}\n\n${body}`);
      first = false;
      let timer: Timer | undefined;
      await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, o.intervalMs)))]);
      clearTimeout(timer);
    }
    return 0;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** Cursor home, then erase the screen (ECMA-48 CUP and ED). */
const CLEAR_SCREEN = "\x1b[H\x1b[2J";

export async function runAgent(argv: readonly string[], io: CliIo): Promise<number> {
  const o = await agentOptions(argv, io);
  if (o === "help") {
    await io.out(`${AGENT_HELP}\n`);
    return 0;
  }
  if (o.action === "watch") return await watch(o, io);
  if (o.action === "stats") {
    await io.out(await statsText(o, io));
    return 0;
  }
  const r = await agentGet(o, "/health");
  const v = healthView(r.json);
  await io.out(o.format === "json" ? withNewline(r.text) : `${renderHealth(v).join("\n")}\n`);
  return v.status === "ok" ? 0 : 1;
}
