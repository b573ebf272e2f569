import { AppError } from "../core/index.ts";
import { UsageError } from "./args.ts";
import {
  baseUrl,
  httpRequest,
  insecureTlsFromEnv,
  serverMessage,
  type HttpOptions,
  type HttpResponse,
} from "./http.ts";
import type { CliIo } from "./io.ts";
import { TokenCache, tokenCachePath } from "./token-cache.ts";

/**
 * The coordinator as `svc search` sees it (`/api/v4`; docs/CLI.md "Authentication"): a Bearer
 * JWT from `--token`, else from the token cache, else from `POST /auth/sessions` with `--user` /
 * `--pass` (then cached). A 401 on a reused token logs in again once when credentials are at
 * hand; otherwise the error says how to log in.
 */
export interface CoordinatorAuth {
  token?: string;
  /**
   * Send `token` raw in this header (the coordinator's `api_settings.auth_token_header`, e.g.
   * `Auth-Token`) instead of as a Bearer JWT: a static API token for scripts (docs/CLI.md
   * "Authentication", docs/ADMIN.md "API tokens").
   */
  tokenHeader?: string;
  user?: string;
  pass?: string;
}

type TokenSource = "flag" | "cache" | "login";

export class CoordinatorClient {
  private token: string | undefined;
  private source: TokenSource | undefined;
  /** `http(s)://host:port/api/v4`, also the token cache key. */
  readonly apiBase: string;

  constructor(
    origin: string,
    private readonly auth: CoordinatorAuth,
    private readonly cache: TokenCache | undefined,
    private readonly http: HttpOptions,
  ) {
    this.apiBase = `${origin.replace(/\/api\/v4$/, "")}/api/v4`;
  }

  private get canLogin(): boolean {
    return !!this.auth.user && this.auth.pass !== undefined;
  }

  /** POST /auth/sessions → 201 {token, expires_at, …}; the token goes to the cache. */
  async login(): Promise<string> {
    if (!this.auth.user || this.auth.pass === undefined)
      throw new UsageError(
        "not logged in: give --user and --pass (the token is then cached in ~/.svc_token) or --token",
      );
    const r = await httpRequest("POST", `${this.apiBase}/auth/sessions`, this.http, {
      body: JSON.stringify({ username: this.auth.user, password: this.auth.pass }),
    });
    const body = r.json as { token?: unknown; expires_at?: unknown } | undefined;
    if (r.status !== 201 && r.status !== 200)
      throw new AppError(
        r.status === 401 ? "UNAUTHORIZED" : "BAD_GATEWAY",
        `login as ${this.auth.user} failed: HTTP ${r.status} ${serverMessage(r)}`,
      );
    if (typeof body?.token !== "string" || body.token === "")
      throw new AppError("BAD_GATEWAY", `login answer has no token: ${serverMessage(r)}`);
    this.token = body.token;
    this.source = "login";
    this.cache?.set(this.apiBase, {
      user: this.auth.user,
      token: body.token,
      expires_at: typeof body.expires_at === "string" ? body.expires_at : "",
    });
    return body.token;
  }

  private async currentToken(): Promise<string> {
    if (this.token) return this.token;
    if (this.auth.token) {
      this.source = "flag";
      return (this.token = this.auth.token);
    }
    const cached = this.cache?.get(this.apiBase, this.auth.user);
    if (cached) {
      this.source = "cache";
      return (this.token = cached.token);
    }
    return await this.login();
  }

  /** The credential header of the current token (also for a WebSocket handshake). */
  async authHeaders(): Promise<Record<string, string>> {
    const token = await this.currentToken();
    return this.source === "flag" && this.auth.tokenHeader
      ? { [this.auth.tokenHeader]: token }
      : { authorization: `Bearer ${token}` };
  }

  private async send(method: "GET" | "POST", path: string, body: unknown): Promise<HttpResponse> {
    const headers = await this.authHeaders();
    return await httpRequest(method, `${this.apiBase}${path}`, this.http, {
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }

  /**
   * A request with the current token; a 401 on a reused token logs in again once when
   * credentials are at hand, else throws saying how to log in. Other statuses are the caller's.
   */
  async request(method: "GET" | "POST", path: string, body?: unknown): Promise<HttpResponse> {
    let r = await this.send(method, path, body);
    if (r.status === 401) {
      const why = serverMessage(r);
      if (this.source !== "login" && this.canLogin) {
        this.token = undefined;
        await this.login();
        r = await this.send(method, path, body);
      } else if (this.source === "cache") {
        this.cache?.delete(this.apiBase);
        throw new AppError(
          "UNAUTHORIZED",
          `the cached token was rejected (${why}); log in again with --user and --pass`,
        );
      } else if (this.source === "flag") {
        throw new AppError("UNAUTHORIZED", `--token was rejected (${why})`);
      }
    }
    return r;
  }

  /**
   * POST a JSON body; returns the parsed answer of a 2xx, throws one-line AppErrors otherwise.
   * `routeMayBeMissing`: a 404 (a coordinator older than the route) returns undefined instead.
   */
  async post(path: string, body: unknown, o: { routeMayBeMissing?: boolean } = {}): Promise<unknown> {
    const r = await this.request("POST", path, body);
    if (r.status === 404 && o.routeMayBeMissing) return undefined;
    if (r.status < 200 || r.status > 299)
      throw new AppError(
        r.status === 401 ? "UNAUTHORIZED" : "BAD_GATEWAY",
        `POST ${path}: HTTP ${r.status} ${serverMessage(r)}`,
      );
    if (r.json === undefined) throw new AppError("BAD_GATEWAY", `POST ${path}: the answer is not JSON`);
    return r.json;
  }
}

/** The client for `--host` and the credentials: token cache in $HOME, TLS per SVC_INSECURE_TLS, `--debug` to stderr. */
export function coordinatorClient(o: { host: string } & CoordinatorAuth, io: CliIo, debug: boolean): CoordinatorClient {
  return new CoordinatorClient(
    baseUrl(o.host),
    {
      ...(o.token ? { token: o.token } : {}),
      ...(o.tokenHeader ? { tokenHeader: o.tokenHeader } : {}),
      ...(o.user ? { user: o.user } : {}),
      ...(o.pass !== undefined ? { pass: o.pass } : {}),
    },
    new TokenCache(tokenCachePath(io.env)),
    {
      insecureTls: insecureTlsFromEnv(io.env),
      timeoutMs: 60_000,
      ...(debug ? { debug: (line: string) => void io.err(`${line}\n`) } : {}),
      ...(o.tokenHeader ? { secretHeaders: [o.tokenHeader] } : {}),
    },
  );
}
