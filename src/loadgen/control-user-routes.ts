/**
 * User routes of the control API (docs/LOADGEN.md "Control API"), with `auth.type internal`:
 * `GET /api/v1/users`, `POST /api/v1/users`, `PATCH /api/v1/users/{name}`,
 * `DELETE /api/v1/users/{name}`. The rules (admin only, own password, last administrator) live in
 * control-users.ts; this file checks the bodies.
 */
import { AppError } from "../core/index.ts";
import { json, readJson, requireMethod, type Route, type RouteContext } from "./control-http.ts";
import type { ControlUsers, UserChange } from "./control-users.ts";

function usersOf(ctx: RouteContext): ControlUsers {
  if (!ctx.users)
    throw new AppError(
      "NOT_FOUND",
      "no control-API users in this run (give the profile an auth object with type internal)",
    );
  return ctx.users;
}

/** The body as an object with only the allowed keys, each of the given type. */
function fields(
  body: unknown,
  allowed: Record<string, "string" | "boolean">,
  example: string,
): Record<string, string | boolean> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new AppError("BAD_REQUEST", `the body must be a JSON object such as ${example}`);
  for (const [k, v] of Object.entries(body)) {
    const type = allowed[k];
    if (!type) throw new AppError("BAD_REQUEST", `unknown key "${k}" (${Object.keys(allowed).join(", ")})`);
    if (typeof v !== type) throw new AppError("BAD_REQUEST", `${k} must be a ${type}`);
  }
  return body as Record<string, string | boolean>;
}

export const userRoutes: Route[] = [
  {
    pattern: /^\/api\/v1\/users$/,
    label: "GET|POST /api/v1/users",
    async handle(req, ctx) {
      const users = usersOf(ctx);
      requireMethod(req, "GET", "POST");
      if (req.method === "GET") return json(200, { users: users.list(ctx.caller) });
      const b = fields(
        await readJson(req),
        { username: "string", password: "string", admin: "boolean" },
        '{"username": "bob", "password": "…", "admin": false}',
      );
      if (typeof b.username !== "string" || typeof b.password !== "string")
        throw new AppError("BAD_REQUEST", "username and password are required");
      return json(
        201,
        await users.create(ctx.caller, { username: b.username, password: b.password, admin: b.admin === true }),
      );
    },
  },
  {
    pattern: /^\/api\/v1\/users\/([^/]+)$/,
    label: "PATCH|DELETE /api/v1/users/{name}",
    async handle(req, ctx, [name]) {
      const users = usersOf(ctx);
      requireMethod(req, "PATCH", "DELETE");
      if (req.method === "DELETE") {
        users.remove(ctx.caller, name!);
        return new Response(null, { status: 204 });
      }
      const change = fields(
        await readJson(req),
        { password: "string", current_password: "string", admin: "boolean", active: "boolean" },
        '{"password": "…"} or {"active": false}',
      ) as UserChange;
      if (change.password === undefined && change.admin === undefined && change.active === undefined)
        throw new AppError("BAD_REQUEST", "nothing to change: give password, admin and/or active");
      return json(200, await users.update(ctx.caller, name!, change));
    },
  },
];
