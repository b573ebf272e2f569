/**
 * Control API of a running loadgen (docs/LOADGEN.md "Control API"): `GET /api/v1/stats` returns
 * the primary engine's statistics, or `{multi: true, engines: [{id, stats}]}` when clients run
 * beside it; `POST /api/v1/control` with `{rate?, pause?}` applies to every engine. With
 * `api_token` set, both need `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from "node:crypto";
import type { ControlUsers } from "./control-users.ts";
import type { Engine } from "./engine.ts";
import { LoadgenUsageError, splitHostPort } from "./options.ts";

export interface ControlApi {
  readonly port: number;
  stop(): void;
}

const json = (status: number, body: unknown) => Response.json(body, { status });
const error = (status: number, code: string, message: string) => json(status, { error: code, message });

async function authorized(header: string | null, token: string, users: ControlUsers | undefined): Promise<boolean> {
  if (token && tokenMatches(header, token)) return true;
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return users !== undefined && m !== null && (await users.verify(m[1]!));
}

function tokenMatches(header: string | null, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m) return false;
  const a = Buffer.from(m[1]!);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Validates a control body; returns what to apply or a message for a 400. */
export function parseControl(body: unknown): { rate?: number; pause?: boolean } | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return 'the body must be a JSON object such as {"rate": 50} or {"pause": true}';
  const out: { rate?: number; pause?: boolean } = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === "rate") {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return "rate must be a number ≥ 0 (calls per rate period)";
      out.rate = v;
    } else if (k === "pause") {
      if (typeof v !== "boolean") return "pause must be true or false";
      out.pause = v;
    } else return `unknown control key "${k}" (rate, pause)`;
  }
  if (out.rate === undefined && out.pause === undefined) return "nothing to change: give rate and/or pause";
  return out;
}

export function startControlApi(addr: string, token: string, engines: readonly Engine[], users?: ControlUsers): ControlApi {
  const { host, port } = splitHostPort(addr, 8080, "api_addr");
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: host,
      port,
      reusePort: false,
      async fetch(req) {
        const url = new URL(req.url);
        if (url.pathname === "/api/v1/login") {
          if (!users) return error(404, "NOT_FOUND", "no control-API users (auth.type internal) in this run");
          if (req.method !== "POST") return error(405, "METHOD_NOT_ALLOWED", "use POST");
          const body = (await req.json().catch(() => null)) as { username?: unknown; password?: unknown } | null;
          if (typeof body?.username !== "string" || typeof body.password !== "string") return error(400, "BAD_REQUEST", 'the body must be {"username": "…", "password": "…"}');
          const jwt = await users.login(body.username, body.password);
          return jwt ? json(200, { token: jwt }) : error(401, "UNAUTHORIZED", "wrong username or password");
        }
        if ((token || users) && !(await authorized(req.headers.get("authorization"), token, users)))
          return error(401, "UNAUTHORIZED", users ? "missing or wrong bearer token (api_token or a token from POST /api/v1/login)" : "missing or wrong bearer token (api_token)");
        if (url.pathname === "/api/v1/stats") {
          if (req.method !== "GET") return error(405, "METHOD_NOT_ALLOWED", "use GET");
          if (engines.length === 1) return json(200, engines[0]!.snapshot());
          return json(200, { multi: true, engines: engines.map((e) => ({ id: e.id, stats: e.snapshot() })) });
        }
        if (url.pathname === "/api/v1/control") {
          if (req.method !== "POST") return error(405, "METHOD_NOT_ALLOWED", "use POST");
          let body: unknown;
          try {
            body = await req.json();
          } catch {
            return error(400, "BAD_REQUEST", "the body is not valid JSON");
          }
          const change = parseControl(body);
          if (typeof change === "string") return error(400, "BAD_REQUEST", change);
          for (const e of engines) {
            if (change.rate !== undefined) e.setRate(change.rate);
            if (change.pause !== undefined) e.setPaused(change.pause);
          }
          const s = engines[0]!.snapshot();
          return json(200, { rate: s.rate, paused: s.paused, engines: engines.length });
        }
        return error(404, "NOT_FOUND", `no route ${url.pathname} (GET /api/v1/stats, POST /api/v1/control)`);
      },
      error() {
        return error(500, "INTERNAL", "internal error");
      },
    });
  } catch (e) {
    throw new LoadgenUsageError(`cannot listen on api_addr ${addr}: ${(e as Error).message}`);
  }
  return {
    port: server.port ?? port,
    stop: () => void server.stop(true),
  };
}
