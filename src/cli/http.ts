import { AppError, errorMessage } from "../core/index.ts";
import { UsageError } from "./args.ts";

/**
 * HTTP for the terminal clients (`svc search`, `svc agent`): base URLs from `--host`, certificate
 * verification on unless SVC_INSECURE_TLS is 1/true/yes (docs/CLI.md "Authentication"), `--debug`
 * request/response lines on stderr with credentials masked, and one-line errors.
 */
export interface HttpOptions {
  insecureTls: boolean;
  timeoutMs: number;
  /** `--debug`: receives one line at a time (stderr). */
  debug?: (line: string) => void;
  /** Headers besides Authorization whose values --debug masks (a raw API token header). */
  secretHeaders?: string[];
}

export interface HttpResponse {
  status: number;
  text: string;
  /** The body parsed as JSON, undefined when it is not JSON. */
  json: unknown;
}

export const insecureTlsFromEnv = (env: Record<string, string | undefined>) =>
  /^(1|true|yes)$/i.test((env.SVC_INSECURE_TLS ?? "").trim());

/** `127.0.0.1:8080` → `http://127.0.0.1:8080`; `https://` kept (TLS); trailing slashes dropped. */
export function baseUrl(host: string): string {
  const h = host.trim().replace(/\/+$/, "");
  if (h === "") throw new UsageError("--host is empty");
  const url = /^https?:\/\//i.test(h) ? h : `http://${h.startsWith(":") ? `127.0.0.1${h}` : h}`;
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--host "${host}" is not host:port or a URL`);
  }
  return url;
}

const SECRET_MEMBERS = /("(?:password|pass|token|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
/** Body text for --debug: secrets replaced, long bodies cut. */
export function maskForDebug(text: string, max = 4000): string {
  const masked = text.replace(SECRET_MEMBERS, '$1"***"');
  return masked.length > max ? `${masked.slice(0, max)}… (${masked.length} chars)` : masked;
}

const maskAuth = (v: string) => v.replace(/^(Bearer|Basic)\s+.*$/i, "$1 ***");

export async function httpRequest(
  method: string,
  url: string,
  o: HttpOptions,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: "application/json", ...init.headers };
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const started = performance.now();
  if (o.debug) {
    o.debug(`> ${method} ${url}`);
    for (const [k, v] of Object.entries(headers))
      o.debug(
        `> ${k}: ${k.toLowerCase() === "authorization" ? maskAuth(v) : o.secretHeaders?.includes(k) ? "***" : v}`,
      );
    if (init.body !== undefined) o.debug(`> ${maskForDebug(init.body)}`);
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.timeout(o.timeoutMs),
      ...(url.startsWith("https:") ? { tls: { rejectUnauthorized: !o.insecureTls } } : {}),
    });
  } catch (e) {
    throw new AppError("UNAVAILABLE", `${method} ${url}: ${describeFetchError(e, o)}`, { cause: e });
  }
  const text = await res.text();
  if (o.debug) {
    o.debug(`< ${res.status} ${res.statusText} (${Math.round(performance.now() - started)} ms, ${text.length} bytes)`);
    if (text !== "") o.debug(`< ${maskForDebug(text)}`);
  }
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

function describeFetchError(e: unknown, o: HttpOptions): string {
  const msg = errorMessage(e);
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "";
  if (e instanceof DOMException && (e.name === "TimeoutError" || e.name === "AbortError"))
    return `no answer within ${Math.round(o.timeoutMs / 1000)} s`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|certificate/i.test(`${code} ${msg}`)) {
    return `TLS certificate not trusted (${code || msg}); set SVC_INSECURE_TLS=1 to skip verification for a private or self-signed certificate`;
  }
  if (code === "ConnectionRefused" || /ECONNREFUSED|Unable to connect/i.test(msg))
    return "connection refused (is the service running on that address?)";
  return code && !msg.includes(code) ? `${msg} (${code})` : msg;
}

/** The server's `{error, message}` body (docs/API.md "Errors") as one line, else the status text. */
export function serverMessage(r: HttpResponse): string {
  const j = r.json;
  if (j && typeof j === "object" && !Array.isArray(j)) {
    const o = j as Record<string, unknown>;
    const msg = typeof o.message === "string" ? o.message : undefined;
    const code = typeof o.error === "string" ? o.error : undefined;
    if (msg || code) return [code, msg].filter(Boolean).join(": ");
  }
  const t = r.text.trim().split(/\r?\n/, 1)[0] ?? "";
  return t.length > 200 ? `${t.slice(0, 200)}…` : t || `HTTP ${r.status}`;
}
