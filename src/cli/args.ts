import { parseArgs as nodeParseArgs } from "node:util";
import { AppError } from "../core/index.ts";

/**
 * Declarative flags: `--name value`, `--name=value`, boolean `--flag`, one-letter aliases.
 * Unknown flags and bad values raise UsageError; the caller prints one line and exits 2.
 */
export class UsageError extends AppError {
  constructor(message: string) {
    super("BAD_REQUEST", message);
  }
}

export interface FlagSpec {
  name: string;
  alias?: string;
  type: "string" | "boolean" | "number";
  description: string;
  default?: string | number | boolean;
  /** May be given several times; values collect into an array. */
  repeat?: boolean;
}

export type ParsedFlags = Record<string, string | number | boolean | string[] | undefined>;

export interface Parsed {
  flags: ParsedFlags;
  positionals: string[];
}

/**
 * node:util's parseArgs tokenizes (long and short names, `--name=value`, `-ovalue`, `--`); the
 * rules and messages are ours: a boolean also takes `=true|false`, a value may start with a dash
 * (`--from -1h`), numbers are checked, unknown flags and missing values are a UsageError.
 */
export function parseArgs(
  argv: readonly string[],
  specs: readonly FlagSpec[],
  opts: { allowPositionals?: boolean } = {},
): Parsed {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const s of specs)
    options[s.name] = { type: s.type === "boolean" ? "boolean" : "string", ...(s.alias ? { short: s.alias } : {}) };
  const { tokens } = nodeParseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const flags: ParsedFlags = {};
  for (const s of specs) if (s.default !== undefined) flags[s.name] = s.default;
  const positionals: string[] = [];
  for (const t of tokens) {
    if (t.kind === "option-terminator") continue;
    if (t.kind === "positional") {
      if (!opts.allowPositionals) throw new UsageError(`unexpected argument "${t.value}"`);
      positionals.push(t.value);
      continue;
    }
    const spec = byName.get(t.name);
    if (!spec) throw new UsageError(`unknown flag "${t.rawName}"`);
    if (spec.type === "boolean") {
      flags[spec.name] = t.value === undefined ? true : booleanValue(spec, t.value);
      continue;
    }
    const raw = t.value;
    if (raw === undefined) throw new UsageError(`--${spec.name} needs a value`);
    let value: string | number = raw;
    if (spec.type === "number") {
      value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value))
        throw new UsageError(`--${spec.name} takes a number, got "${raw}"`);
    }
    if (spec.repeat) {
      const prev = flags[spec.name];
      flags[spec.name] = [...(Array.isArray(prev) ? prev : []), String(value)];
    } else flags[spec.name] = value;
  }
  return { flags, positionals };
}

function booleanValue(spec: FlagSpec, raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new UsageError(`--${spec.name} takes true or false, got "${raw}"`);
}

export function formatHelp(
  usage: string,
  summary: string,
  specs: readonly FlagSpec[],
  commands?: ReadonlyArray<[string, string]>,
): string {
  const lines = [`Usage: ${usage}`, "", summary];
  if (commands?.length) {
    lines.push("", "Commands:");
    const w = Math.max(...commands.map(([c]) => c.length));
    for (const [c, d] of commands) lines.push(`  ${c.padEnd(w)}  ${d}`);
  }
  if (specs.length) {
    lines.push("", "Options:");
    const names = specs.map(
      (s) =>
        `${s.alias ? `-${s.alias}, ` : ""}--${s.name}${s.type === "boolean" ? "" : ` <${s.type === "number" ? "n" : "value"}>`}`,
    );
    const w = Math.max(...names.map((n) => n.length));
    specs.forEach((s, i) =>
      lines.push(
        `  ${names[i]!.padEnd(w)}  ${s.description}${s.default !== undefined && s.default !== false ? ` (default ${s.default})` : ""}`,
      ),
    );
  }
  return lines.join("\n");
}
