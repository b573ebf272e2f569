import { Elysia, type AnyElysia } from "elysia";
import { AppError } from "../core/index.ts";

const isObjectSchema = (s: unknown): boolean => typeof s === "object" && s !== null && (s as { type?: unknown }).type === "object";

const describe = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);

/**
 * A request body declared as an object must be one. Elysia turns an array, a string, a number or
 * null into `{}` for a `t.Object` body with a default or only optional members (it assigns the
 * value onto `{}` before validating), so `PATCH /tokens/{id}` with `[]` answered 200 "changed
 * nothing" (issue 14). Checked as a transform, after parsing and before Elysia's coercion, for the
 * routes whose body schema is an object; other routes are not touched.
 *
 * Global on `app`: a transform that reads `body` makes Elysia parse every body of the app, so this
 * is not for apps with routes that read the raw request (the node app's HEP over HTTP).
 */
export function objectBodies(app: AnyElysia) {
  let known: { routes: number; keys: Set<string> } | undefined;
  const objectBodyRoutes = (): Set<string> => {
    const routes = app.routes;
    if (known?.routes !== routes.length) {
      const keys = new Set<string>();
      for (const r of routes) if (isObjectSchema((r.hooks as { body?: unknown } | undefined)?.body)) keys.add(`${r.method} ${r.path}`);
      known = { routes: routes.length, keys };
    }
    return known.keys;
  };
  return new Elysia({ name: "svc-object-bodies" }).onTransform({ as: "global" }, ({ body, request, route }) => {
    if (body === undefined || (typeof body === "object" && body !== null && !Array.isArray(body))) return;
    if (!objectBodyRoutes().has(`${request.method} ${route}`)) return;
    throw new AppError("VALIDATION", `(body): must be a JSON object, not ${describe(body)}`, { details: { fields: ["(body)"] } });
  });
}
