import { AppError } from "./errors.ts";

/** A listen address as written in config: `:8080`, `0.0.0.0:8080`, `127.0.0.1:0`, `[::1]:9060`. */
export interface ListenAddress {
  hostname: string;
  port: number;
}

export function parseListen(value: string, key = "listen"): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  if (!m) throw new AppError("CONFIG_INVALID", `${key}: "${value}" is not host:port (e.g. ":8080" or "127.0.0.1:8080")`);
  const port = Number(m[3]);
  if (port > 65535) throw new AppError("CONFIG_INVALID", `${key}: port ${port} is out of range`);
  const hostname = m[1] ?? (m[2] === "" || m[2] === undefined ? "0.0.0.0" : m[2]);
  return { hostname, port };
}

export const formatAddress = (hostname: string, port: number) =>
  hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
