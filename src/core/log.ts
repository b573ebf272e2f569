/**
 * Structured logger: JSON lines (default when stdout is not a TTY) or a readable single line on a
 * TTY. Secrets never reach here: callers pass already-masked context.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "auto" | "json" | "pretty";

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, ctx?: Record<string, unknown>): void;
  info(msg: string, ctx?: Record<string, unknown>): void;
  warn(msg: string, ctx?: Record<string, unknown>): void;
  error(msg: string, ctx?: Record<string, unknown>): void;
  child(ctx: Record<string, unknown>): Logger;
}

export interface LogSink {
  write(line: string): void;
}

interface LoggerState {
  level: number;
  pretty: boolean;
  sink: LogSink;
}

const stderrSink: LogSink = { write: (line) => process.stderr.write(line + "\n") };

const state: LoggerState = { level: LEVELS.info, pretty: false, sink: stderrSink };

export function configureLogging(opts: { level?: LogLevel; format?: LogFormat; sink?: LogSink }): void {
  if (opts.level) state.level = LEVELS[opts.level];
  if (opts.format) state.pretty = opts.format === "pretty" || (opts.format === "auto" && Boolean(process.stderr.isTTY));
  if (opts.sink) state.sink = opts.sink;
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) {
    const out: Record<string, unknown> = { message: value.message, name: value.name };
    if ("code" in value) out.code = (value as { code: unknown }).code;
    if (value.cause !== undefined) out.cause = serialise(value.cause);
    return out;
  }
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** Bound and call context merged, Errors and bigints made JSON-safe. */
function fieldsOf(bound: Record<string, unknown>, ctx?: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...bound, ...ctx };
  for (const k of Object.keys(fields)) fields[k] = serialise(fields[k]);
  return fields;
}

/** One logged line as the recent-lines ring keeps it (GET /api/v4/system/logs, docs/OPERATIONS.md "System, logs and integrations"). */
export interface LogRecord {
  ts: string;
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

/** Lines the ring keeps: the newest, whatever the sink (stderr, journald) does with them. */
const RECENT_LINES = 2000;
const recent: LogRecord[] = [];
let recentAt = 0;

function remember(r: LogRecord): void {
  if (recent.length < RECENT_LINES) recent.push(r);
  else recent[recentAt] = r;
  recentAt = (recentAt + 1) % RECENT_LINES;
}

/**
 * The newest logged lines (at the configured level and above, as written), oldest first: at most
 * `limit`, at `minLevel` or above, after `sinceMs`. Secrets never reach the logger.
 */
export function recentLogLines(opts: { limit?: number; minLevel?: LogLevel; sinceMs?: number } = {}): LogRecord[] {
  const ordered = recent.length < RECENT_LINES ? recent : [...recent.slice(recentAt), ...recent.slice(0, recentAt)];
  const min = LEVELS[opts.minLevel ?? "debug"];
  const since = opts.sinceMs ?? Number.NEGATIVE_INFINITY;
  const kept = ordered.filter((r) => LEVELS[r.level] >= min && Date.parse(r.ts) > since);
  return kept.slice(Math.max(0, kept.length - (opts.limit ?? RECENT_LINES)));
}

function emit(level: LogLevel, bound: Record<string, unknown>, msg: string, ctx?: Record<string, unknown>): void {
  if (LEVELS[level] < state.level) return;
  const fields = fieldsOf(bound, ctx);
  remember({ ts: new Date().toISOString(), level, msg, fields });
  if (state.pretty) {
    const extra = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
    state.sink.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${msg}${extra ? " " + extra : ""}`);
  } else {
    state.sink.write(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }));
  }
}

export function createLogger(bound: Record<string, unknown> = {}): Logger {
  return {
    debug: (m, c) => emit("debug", bound, m, c),
    info: (m, c) => emit("info", bound, m, c),
    warn: (m, c) => emit("warn", bound, m, c),
    error: (m, c) => emit("error", bound, m, c),
    child: (c) => createLogger({ ...bound, ...c }),
  };
}

export const log = createLogger();

/**
 * A logger whose lines go elsewhere to be written, e.g. from a worker thread to the main thread's
 * logger (one sink, one format): the same level filter and fields as createLogger, handed to `forward`.
 */
export function forwardingLogger(
  min: LogLevel,
  forward: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void,
  bound: Record<string, unknown> = {},
): Logger {
  const at = (level: LogLevel) => (msg: string, ctx?: Record<string, unknown>) => {
    if (LEVELS[level] >= LEVELS[min]) forward(level, msg, fieldsOf(bound, ctx));
  };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (c) => forwardingLogger(min, forward, { ...bound, ...c }),
  };
}
