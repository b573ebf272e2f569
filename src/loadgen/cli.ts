/**
 * `loadgen` / `svc loadgen` command line (docs/LOADGEN.md "Command line"): sipp-style flags, the
 * run-profile flags `-config`, `-run-alias`, `-list-aliases`, and the `server` subcommand for flat
 * and composite profiles. Usage errors print one line and exit 2.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { AppError } from "../core/index.ts";
import { FLAGS, LoadgenUsageError } from "./options.ts";
import {
  aliasNames,
  mergeOptions,
  parseProfileJson,
  planAlias,
  planFlat,
  rejectDuplicateBinds,
  type RunPlan,
} from "./profile.ts";
import { startPlan, type LoadgenIo } from "./run.ts";
import { pcap2scenario } from "./pcap2scenario.ts";
import { loadScenario } from "./scenario-xml.ts";
import { runShell, runTui, type ClientIo } from "./control-client.ts";
import { profileCommand } from "./profile-cmd.ts";

const SUBCOMMANDS = ["server", "tui", "shell", "profile", "pcap2scenario"];
const PROFILE_FLAGS = ["config", "run-alias", "list-aliases"];
const REMOVED_FLAGS = ["config-server", "config-client"];

export const LOADGEN_HELP = `loadgen: SIP load generator (UAC/UAS over UDP), sipp-compatible flags.

Usage:
  loadgen [flags] [remote_host[:port]]            client (uac, register, options) or -sn uas
  loadgen -config <file> -run-alias <name> [flags] run an alias of a profile file
  loadgen -config <file> -list-aliases             print the alias names
  loadgen server [-config <flat-or-composite.json>] [flags]   management mode (listeners, control API)
  loadgen pcap2scenario <capture> [-role uac|uas] [-call_id <id>] [-o <file.xml>]
  loadgen tui [-api_addr host:port] [-api_token t | -api_user u -api_password p] [-interval 1s] [-count n]   live counters
  loadgen shell [-api_addr host:port] [-api_token t | -api_user u -api_password p]   commands: stats, rate <n>, pause, resume, scenario, listeners, listener, transport, users, useradd, userdel, passwd, quit
  loadgen profile check|show|keys|init …          check and inspect profile files (loadgen profile -h)

Flags (same meaning as sipp -h): ${Object.keys(FLAGS)
  .map((f) => `-${f}`)
  .join(" ")}
Details: docs/LOADGEN.md`;

interface ProfileFlags {
  config?: string;
  runAlias?: string;
  listAliases: boolean;
  rest: string[];
}

/** Takes -config/-run-alias/-list-aliases (one or two dashes, `=value` or next argument) out of argv. */
function takeProfileFlags(argv: readonly string[]): ProfileFlags {
  const out: ProfileFlags = { listAliases: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1] ?? "";
    if (REMOVED_FLAGS.includes(name))
      throw new LoadgenUsageError(
        `-${name} was removed: write a flat profile and run "loadgen server -config <file>", or use "loadgen -config <file> -run-alias <name>" (docs/LOADGEN.md)`,
      );
    if (!PROFILE_FLAGS.includes(name)) {
      out.rest.push(arg);
      continue;
    }
    if (name === "list-aliases") {
      out.listAliases = true;
      continue;
    }
    const value = m?.[2] ?? argv[++i];
    if (value === undefined || value === "") throw new LoadgenUsageError(`-${name} needs a value`);
    if (name === "config") out.config = value;
    else out.runAlias = value;
  }
  return out;
}

function readProfile(path: string): { json: Record<string, unknown>; dir: string } {
  const abs = resolve(path);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot read profile ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  return { json: parseProfileJson(text, path), dir: dirname(abs) };
}

/** `pcap2scenario <capture> [-role uac|uas] [-call_id <id>] [-o <file.xml>]`: the XML on stdout or in the file. */
function pcap2scenarioCommand(argv: readonly string[]): { print: string[] } {
  let input: string | undefined;
  let role: "uac" | "uas" = "uac";
  let callId: string | undefined;
  let output: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new LoadgenUsageError(`${a} needs a value`);
      return v;
    };
    if (a === "-role" || a === "--role") {
      const r = value();
      if (r !== "uac" && r !== "uas") throw new LoadgenUsageError(`-role must be uac or uas, got "${r}"`);
      role = r;
    } else if (a === "-call_id" || a === "--call-id") callId = value();
    else if (a === "-o" || a === "--output") output = value();
    else if (a.startsWith("-")) throw new LoadgenUsageError(`unknown pcap2scenario flag ${a} (-role, -call_id, -o)`);
    else if (input === undefined) input = a;
    else throw new LoadgenUsageError(`pcap2scenario takes one capture file, got also "${a}"`);
  }
  if (input === undefined)
    throw new LoadgenUsageError(
      "usage: loadgen pcap2scenario <capture.pcap> [-role uac|uas] [-call_id <id>] [-o <file.xml>]",
    );
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(input);
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot read capture ${input}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const xml = pcap2scenario(bytes, { role, callId });
  if (output === undefined) return { print: [xml.trimEnd()] };
  writeFileSync(output, xml);
  return { print: [] };
}

/** The plan for argv, or a list of lines to print (help, -list-aliases). */
export function planFromArgv(
  argv: readonly string[],
): RunPlan | { print: string[] } | { client: "tui" | "shell"; argv: string[] } {
  const sub = argv[0] !== undefined && SUBCOMMANDS.includes(argv[0]) ? argv[0] : "";
  const f = takeProfileFlags(sub ? argv.slice(1) : argv);
  if (sub !== "profile" && (f.rest.includes("-h") || f.rest.includes("--help") || f.rest.includes("-help")))
    return { print: [LOADGEN_HELP] };
  const usedProfileFlag = f.config !== undefined || f.runAlias !== undefined || f.listAliases;
  if (sub && sub !== "server") {
    if (usedProfileFlag)
      throw new LoadgenUsageError(
        `-config, -run-alias and -list-aliases apply only to the root command, not to "${sub}"`,
      );
    if (sub === "pcap2scenario") return pcap2scenarioCommand(f.rest);
    if (sub === "profile") return profileCommand(f.rest, readProfile);
    if (sub === "tui" || sub === "shell") return { client: sub, argv: f.rest };
    throw new LoadgenUsageError(`the "${sub}" subcommand is not built yet (docs/LOADGEN.md)`);
  }
  if (sub === "server") {
    if (f.runAlias !== undefined || f.listAliases)
      throw new LoadgenUsageError(
        `-run-alias and -list-aliases do not combine with "server"; run an alias with: loadgen -config <file> -run-alias <name>`,
      );
    if (f.config === undefined) {
      const opts = mergeOptions({}, process.cwd(), "management", f.rest);
      const plan: RunPlan = {
        engines: [{ id: "server", mode: "management", opts }],
        api_addr: opts.api_addr,
        api_token: opts.api_token,
      };
      rejectDuplicateBinds(plan.engines);
      return plan;
    }
    const { json, dir } = readProfile(f.config);
    return planFlat(json, f.config, dir, f.rest);
  }
  if (f.listAliases) {
    if (f.config === undefined) throw new LoadgenUsageError("-list-aliases needs -config <file>");
    const { json } = readProfile(f.config);
    return { print: aliasNames(json, f.config) };
  }
  if (f.runAlias !== undefined && f.config === undefined)
    throw new LoadgenUsageError("-run-alias needs -config <file>");
  if (f.config !== undefined) {
    if (f.runAlias === undefined)
      throw new LoadgenUsageError(
        "-config needs -run-alias <name> (or -list-aliases); a flat profile runs with: loadgen server -config <file>",
      );
    const { json, dir } = readProfile(f.config);
    const plan = planAlias(json, f.config, dir, f.runAlias, f.rest);
    rejectDuplicateBinds(plan.engines);
    return plan;
  }
  // Plain sipp-style command line: a server scenario (-sn uas, or an -sf file starting with a recv)
  // listens on 5060 by default like sipp; no control API unless -api_addr.
  const opts = mergeOptions({}, process.cwd(), "load", f.rest);
  const uas = opts.scenario_file
    ? !loadScenario(opts.scenario_file).client
    : opts.scenario_name.toLowerCase() === "uas";
  if (uas && opts.local_port === undefined) opts.local_port = 5060;
  return {
    engines: [{ id: "main", mode: uas ? "management" : "load", opts }],
    api_addr: opts.api_addr,
    api_token: opts.api_token,
  };
}

export const processLoadgenIo: LoadgenIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** Entry of `svc loadgen …` and of the `loadgen` link: returns the exit code. */
export async function runLoadgen(
  argv: readonly string[],
  io: LoadgenIo & Partial<ClientIo> = processLoadgenIo,
): Promise<number> {
  try {
    const plan = planFromArgv(argv);
    if ("print" in plan) {
      for (const line of plan.print) io.out(line);
      return 0;
    }
    if ("client" in plan) {
      const clientIo = { ...io, tty: io.tty ?? process.stdout.isTTY === true };
      try {
        return plan.client === "tui" ? await runTui(plan.argv, clientIo) : await runShell(plan.argv, clientIo);
      } catch (e) {
        if (e instanceof AppError) throw e;
        io.err(`loadgen ${plan.client}: ${(e as Error).message}`);
        return 1;
      }
    }
    const running = await startPlan(plan, io);
    const onSignal = () => void running.stop();
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      return await running.finished;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    io.err(`loadgen: ${message}`);
    return e instanceof AppError && e.code === "VALIDATION" ? 2 : 1;
  }
}
