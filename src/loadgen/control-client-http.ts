/**
 * What `loadgen tui` and `loadgen shell` share (docs/LOADGEN.md "tui and shell"): their flags, the
 * bearer token (`-api_token`, or a login with `-api_user`/`-api_password` through
 * `POST /api/v1/login`) and one request to the control API.
 */
import { LoadgenUsageError, parseDuration } from "./options.ts";

export interface ClientFlags {
  base: string;
  token: string;
  user: string;
  password: string;
  intervalMs: number;
  count: number;
}

export function parseClientFlags(sub: string, argv: readonly string[]): ClientFlags {
  const f: ClientFlags = {
    base: "http://127.0.0.1:8080",
    token: "",
    user: "",
    password: "",
    intervalMs: 1000,
    count: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--?([a-z_]+)(?:=(.*))?$/.exec(a);
    const value = () => {
      const v = m?.[2] ?? argv[++i];
      if (v === undefined) throw new LoadgenUsageError(`${a} needs a value`);
      return v;
    };
    switch (m?.[1]) {
      case "api_addr": {
        const v = value();
        f.base = /^https?:\/\//.test(v) ? v.replace(/\/$/, "") : `http://${v.startsWith(":") ? `127.0.0.1${v}` : v}`;
        break;
      }
      case "api_token":
        f.token = value();
        break;
      case "api_user":
        f.user = value();
        break;
      case "api_password":
        f.password = value();
        break;
      case "interval":
        f.intervalMs = parseDuration(value());
        if (f.intervalMs < 100) throw new LoadgenUsageError("-interval must be at least 100ms");
        break;
      case "count": {
        const v = value();
        if (!/^\d+$/.test(v)) throw new LoadgenUsageError(`-count needs a whole number, got "${v}"`);
        f.count = Number(v);
        break;
      }
      default:
        throw new LoadgenUsageError(
          `unknown ${sub} flag ${a} (-api_addr, -api_token, -api_user, -api_password${sub === "tui" ? ", -interval, -count" : ""})`,
        );
    }
  }
  // A secret on the command line shows in `ps` and shell history: the environment may carry it instead.
  if (!f.token && !f.user && process.env.LOADGEN_API_TOKEN) f.token = process.env.LOADGEN_API_TOKEN;
  if (f.user && !f.password && process.env.LOADGEN_API_PASSWORD) f.password = process.env.LOADGEN_API_PASSWORD;
  if (f.user && f.token) throw new LoadgenUsageError("give -api_token or -api_user with -api_password, not both");
  if ((f.user === "") !== (f.password === "")) throw new LoadgenUsageError("-api_user and -api_password go together");
  return f;
}

/** One request; the answer's JSON (null for a 204), or an Error with the API's message. */
export async function call(
  f: ClientFlags,
  path: string,
  body?: unknown,
  method = body === undefined ? "GET" : "POST",
): Promise<unknown> {
  let r: Response;
  try {
    r = await fetch(`${f.base}${path}`, {
      method,
      headers: {
        ...(f.token ? { authorization: `Bearer ${f.token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new Error(`cannot reach the control API at ${f.base} (${(e as Error).message})`);
  }
  if (r.status === 204) return null;
  const json = (await r.json().catch(() => ({}))) as { message?: string };
  if (!r.ok) throw new Error(`control API ${r.status}: ${json.message ?? r.statusText}`);
  return json;
}

/** With -api_user: logs in and keeps the token for the following requests. */
export async function logIn(f: ClientFlags): Promise<void> {
  if (!f.user) return;
  const { token } = (await call(f, "/api/v1/login", { username: f.user, password: f.password })) as { token: string };
  f.token = token;
}
