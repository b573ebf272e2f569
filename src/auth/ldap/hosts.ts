import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { CoordinatorConfig } from "../providers.ts";

export type LdapConfig = CoordinatorConfig["ldap"];

/** One LDAP server of `coordinator.ldap.host`, in the order they are tried. */
export interface LdapTarget {
  host: string;
  port: number;
  /** `ldap://host:port` or `ldaps://host:port`, as named in logs and in the 503 answer. */
  url: string;
}

/**
 * `host` is space-separated; each entry is a name or address, optionally `name:port` or
 * `[v6]:port` (docs/AUTH.md). Without a port, `coordinator.ldap.port` applies.
 */
export function ldapTargets(c: LdapConfig): LdapTarget[] {
  const scheme = c.use_ssl ? "ldaps" : "ldap";
  return c.host
    .split(/\s+/)
    .filter((h) => h !== "")
    .map((entry) => {
      const m = /^\[([^\]]+)\]:(\d+)$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
      const host = m ? (m[1] as string) : entry.replace(/^\[|\]$/g, "");
      const port = m ? Number(m[2]) : c.port;
      const shown = isIP(host) === 6 ? `[${host}]` : host;
      return { host, port, url: `${scheme}://${shown}:${port}` };
    });
}

/** TLS settings of LDAPS and StartTLS: `server_name` (else the host when it is a name), `insecure_skip_verify`. */
export function tlsOptions(c: LdapConfig, t: LdapTarget): ConnectionOptions {
  const servername = c.server_name.trim() !== "" ? c.server_name.trim() : isIP(t.host) === 0 ? t.host : undefined;
  return { rejectUnauthorized: !c.insecure_skip_verify, ...(servername !== undefined ? { servername } : {}) };
}

const TLS_CODES = /CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY|HOSTNAME|ALTNAME/i;

/**
 * A short reason for the 503 answer and the log: what went wrong with one server, without stack
 * or secrets (the login name and passwords are never part of it).
 */
export function describeFailure(step: string, e: unknown): string {
  const err = e as { code?: unknown; message?: unknown; name?: unknown } | null;
  const code = typeof err?.code === "string" ? err.code : "";
  const message = typeof err?.message === "string" ? err.message : String(e);
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host name not found";
  if (code === "ETIMEDOUT" || /timeout|timed out/i.test(message)) return "timed out";
  if (code === "ECONNRESET" || /closed|reset|EPIPE/i.test(message)) {
    return step === "StartTLS" || step.startsWith("LDAPS")
      ? `TLS: connection closed during ${step}`
      : `connection closed during ${step}`;
  }
  if (TLS_CODES.test(code) || /certificate|ssl|tls/i.test(message) || step === "StartTLS")
    return `TLS: ${step} failed: ${message}`;
  return `${step} failed: ${message}`;
}
