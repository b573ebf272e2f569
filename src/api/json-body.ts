import { Elysia, type AnyElysia } from "elysia";
import { AppError } from "../core/index.ts";

const isObjectSchema = (s: unknown): boolean =>
  typeof s === "object" && s !== null && (s as { type?: unknown }).type === "object";

const describe = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The first member (dotted path) that the schema declares an object but the value is not; nested too. */
function notAnObject(schema: unknown, value: unknown, path: string): { path: string; value: unknown } | undefined {
  if (value === undefined || typeof schema !== "object" || schema === null) return undefined;
  const s = schema as { type?: unknown; properties?: Record<string, unknown>; items?: unknown };
  if (s.type === "object") {
    if (!isPlainObject(value)) return { path, value };
    for (const [k, sub] of Object.entries(s.properties ?? {})) {
      const bad = notAnObject(sub, value[k], path === "(body)" ? k : `${path}.${k}`);
      if (bad) return bad;
    }
  } else if (s.type === "array" && Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const bad = notAnObject(s.items, v, `${path}.${i}`);
      if (bad) return bad;
    }
  }
  return undefined;
}

/**
 * A request body declared as an object must be one. Elysia turns an array, a string, a number or
 * null into `{}` for a `t.Object` body with a default or only optional members (it assigns the
 * value onto `{}` before validating), so `PATCH /tokens/{id}` with `[]` answered 200 "changed
 * nothing"; nested members the same (`timestamp: [null, null]` became `{}`). Checked as
 * a transform, after parsing and before Elysia's coercion, for the routes whose body schema is an
 * object (a missing body is refused too: the document says the body is required); other routes are
 * not touched.
 *
 * Global on `app`: a transform that reads `body` makes Elysia parse every body of the app, so this
 * is not for apps with routes that read the raw request (the node app's HEP over HTTP).
 */
export function objectBodies(app: AnyElysia) {
  let known: { routes: number; schemas: Map<string, unknown> } | undefined;
  const objectBodySchema = (key: string): unknown => {
    const routes = app.routes;
    if (known?.routes !== routes.length) {
      const schemas = new Map<string, unknown>();
      for (const r of routes) {
        const body = (r.hooks as { body?: unknown } | undefined)?.body;
        if (isObjectSchema(body)) schemas.set(`${r.method} ${r.path}`, body);
      }
      known = { routes: routes.length, schemas };
    }
    return known.schemas.get(key);
  };
  return new Elysia({ name: "svc-object-bodies" }).onTransform({ as: "global" }, ({ body, request, route }) => {
    const schema = objectBodySchema(`${request.method} ${route}`);
    if (schema === undefined) return;
    if (body === undefined || body === "") {
      throw new AppError("VALIDATION", "(body): a JSON object is required (send {} to change nothing)", {
        details: { fields: ["(body)"] },
      });
    }
    const bad = notAnObject(schema, body, "(body)");
    if (bad)
      throw new AppError("VALIDATION", `${bad.path}: must be a JSON object, not ${describe(bad.value)}`, {
        details: { fields: [bad.path] },
      });
  });
}
