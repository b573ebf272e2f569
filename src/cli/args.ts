import { AppError } from "../core/index.ts";

/**
 * A small declarative flag parser: `--name value`, `--name=value`, boolean `--flag`, short aliases.
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

export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], opts: { allowPositionals?: boolean } = {}): Parsed {
  const byName = new Map<string, FlagSpec>();
  for (const s of specs) {
    byName.set(s.name, s);
    if (s.alias) byName.set(s.alias, s);
  }
  const flags: ParsedFlags = {};
  for (const s of specs) if (s.default !== undefined) flags[s.name] = s.default;
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      if (!opts.allowPositionals) throw new UsageError(`unexpected argument "${arg}"`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const key = (eq >= 0 ? arg.slice(0, eq) : arg).replace(/^--?/, "");
    const spec = byName.get(key);
    if (!spec) throw new UsageError(`unknown flag "${arg.slice(0, eq >= 0 ? eq : undefined)}"`);
    let raw: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (spec.type === "boolean") {
      if (raw === undefined) flags[spec.name] = true;
      else if (/^(1|true|yes|on)$/i.test(raw)) flags[spec.name] = true;
      else if (/^(0|false|no|off)$/i.test(raw)) flags[spec.name] = false;
      else throw new UsageError(`--${spec.name} takes true or false, got "${raw}"`);
      continue;
    }
    if (raw === undefined) {
      raw = argv[++i];
      if (raw === undefined) throw new UsageError(`--${spec.name} needs a value`);
    }
    let value: string | number = raw;
    if (spec.type === "number") {
      value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value)) throw new UsageError(`--${spec.name} takes a number, got "${raw}"`);
    }
    if (spec.repeat) {
      const prev = flags[spec.name];
      flags[spec.name] = [...(Array.isArray(prev) ? prev : []), String(value)];
    } else flags[spec.name] = value;
  }
  return { flags, positionals };
}

export function formatHelp(usage: string, summary: string, specs: readonly FlagSpec[], commands?: ReadonlyArray<[string, string]>): string {
  const lines = [`Usage: ${usage}`, "", summary];
  if (commands?.length) {
    lines.push("", "Commands:");
    const w = Math.max(...commands.map(([c]) => c.length));
    for (const [c, d] of commands) lines.push(`  ${c.padEnd(w)}  ${d}`);
  }
  if (specs.length) {
    lines.push("", "Options:");
    const names = specs.map((s) => `${s.alias ? `-${s.alias}, ` : ""}--${s.name}${s.type === "boolean" ? "" : ` <${s.type === "number" ? "n" : "value"}>`}`);
    const w = Math.max(...names.map((n) => n.length));
    specs.forEach((s, i) => lines.push(`  ${names[i]!.padEnd(w)}  ${s.description}${s.default !== undefined && s.default !== false ? ` (default ${s.default})` : ""}`));
  }
  return lines.join("\n");
}
