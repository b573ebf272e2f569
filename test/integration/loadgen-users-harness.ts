/** A management loadgen with control-API users (a real SQLite users database) and an HTTP client for its API. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { planFromArgv, startPlan, type RunningLoadgen } from "../../src/loadgen/index.ts";

export interface UsersLoadgen {
  running: RunningLoadgen;
  base: string;
  adminPassword: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A management loadgen with internal users in `dir` (and `api_token` when given). */
export async function startUsersLoadgen(dir: string, apiToken = ""): Promise<UsersLoadgen> {
  const file = join(dir, "flat.json");
  const profile = {
    scenario_name: "uas",
    api_addr: "127.0.0.1:0",
    ...(apiToken ? { api_token: apiToken } : {}),
    auth: { type: "internal", sqlite_path: "users.db", jwt_secret: "a-secret-of-20-chars" },
  };
  writeFileSync(file, JSON.stringify(profile));
  const plan = planFromArgv(["server", "-config", file, "-p", "0"]);
  if (!("engines" in plan)) throw new Error("expected a run plan");
  const out: string[] = [];
  const running = await startPlan(plan, { out: (l) => out.push(l), err: () => {} });
  const adminPassword = out.map((l) => /password \(shown once\): (\S+)/.exec(l)?.[1]).find(Boolean) ?? "";
  return {
    running,
    base: `http://127.0.0.1:${running.api!.port}/api/v1`,
    adminPassword,
    [Symbol.asyncDispose]: () => running.stop(),
  };
}

export function client(base: string) {
  const req = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await r.text();
    return {
      status: r.status,
      body: (text ? JSON.parse(text) : null) as Record<string, unknown> & { message?: string; error?: string },
    };
  };
  const login = async (username: string, password: string) => {
    const r = await req("POST", "/login", undefined, { username, password });
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${r.body.message}`);
    return r.body.token as string;
  };
  return { req, login };
}
