import { AppError } from "./errors.ts";
import { hostText } from "./ip.ts";

/** A listen address as written in config: `:8080`, `0.0.0.0:8080`, `127.0.0.1:0`, `[::1]:9060`. */
export interface ListenAddress {
  hostname: string;
  port: number;
}

/**
 * `host:port`, `[v6]:port` or `:port` (every address) → parts; without a port, `defaultPort` when
 * given. Undefined when the text is not of that form; the port is not range-checked here.
 */
export function splitHostPort(text: string, defaultPort?: number): ListenAddress | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*))(?::(\d+))?$/.exec(text.trim());
  const port = m?.[3] === undefined ? defaultPort : Number(m[3]);
  if (!m || port === undefined) return undefined;
  return { hostname: m[1] ?? (m[2] || "0.0.0.0"), port };
}

export function parseListen(value: string, key = "listen"): ListenAddress {
  const a = splitHostPort(value);
  if (!a)
    throw new AppError("CONFIG_INVALID", `${key}: "${value}" is not host:port (e.g. ":8080" or "127.0.0.1:8080")`);
  if (a.port > 65535) throw new AppError("CONFIG_INVALID", `${key}: port ${a.port} is out of range`);
  return a;
}

export const formatAddress = (hostname: string, port: number) => `${hostText(hostname)}:${port}`;

const BIND_ERRORS: Record<string, string> = {
  EADDRINUSE: "address already in use (another process, or another listener of this config, has it)",
  EACCES: "permission denied (ports below 1024 need CAP_NET_BIND_SERVICE)",
  EADDRNOTAVAIL: "address not available on this machine",
};

/**
 * The error for a listener that cannot bind: which module, address and config key, and why in
 * words (Bun's own message for a taken TCP port is only "Failed to listen at <host>").
 * `takenHint` is appended when the address is in use (e.g. the key that allows sharing it).
 */
export function listenError(module: string, listen: string, key: string, e: unknown, takenHint = ""): AppError {
  const code = (e as { code?: unknown })?.code;
  const why = (typeof code === "string" && BIND_ERRORS[code]) || (e instanceof Error ? e.message : String(e));
  const hint = code === "EADDRINUSE" ? takenHint : "";
  return new AppError("CONFIG_INVALID", `${module}: cannot listen on ${listen} (${key}): ${why}${hint}`, { cause: e });
}

/** The URL as it may appear in messages and logs: without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(invalid URL)";
  }
}
