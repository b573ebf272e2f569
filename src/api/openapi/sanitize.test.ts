import { expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { anyObject, checkedByRoute } from "./schemas.ts";
import { sanitizeOpenApi } from "./sanitize.ts";

type Op = {
  requestBody?: { content: Record<string, unknown> };
  parameters?: Array<{ schema: unknown }>;
  responses: Record<string, { content?: Record<string, { schema: { properties: Record<string, unknown> } }> }>;
};

test("integers are integers, numeric query values numbers, a 204 has no content, every operation has a default error", () => {
  const app = new Elysia()
    .get("/n", () => ({ count: 1, flag: true }), {
      query: t.Object({
        limit: t.Optional(t.Numeric({ minimum: 1, description: "page size" })),
        on: t.Optional(t.BooleanString()),
      }),
      response: { 200: t.Object({ count: t.Integer({ description: "rows" }), flag: t.Boolean() }) },
    })
    .delete("/n", ({ set }) => void (set.status = 204), { response: { 204: t.Void() } })
    .post("/b", ({ body }) => body, { body: t.Object({ a: t.String(), list: t.Array(t.String(), { default: [] }) }) });
  const raw = toOpenAPISchema(app);
  // What the generator emits (the reason for the sanitizer): a string branch with default 0, and void content.
  expect(JSON.stringify(raw.paths)).toContain('"format":"integer"');
  expect(JSON.stringify(raw.paths)).toContain('"type":"void"');
  const doc = sanitizeOpenApi({ openapi: "3.1.2", paths: raw.paths }) as unknown as {
    paths: Record<string, Record<string, Op>>;
  };
  const get = doc.paths["/n"]!.get!;
  expect(get.responses["200"]!.content!["application/json"]!.schema.properties.count).toEqual({
    type: "integer",
    description: "rows",
  });
  expect(get.parameters![0]!.schema).toEqual({ type: "number", minimum: 1, description: "page size" });
  expect(get.parameters![1]!.schema).toEqual({ type: "boolean" });
  const del = doc.paths["/n"]!.delete!;
  expect(del.responses["204"]!.content).toBeUndefined();
  expect(del.responses.default!.content!["application/json"]!.schema.properties).toHaveProperty("error");
  expect(JSON.stringify(doc)).not.toContain('"format":"integer"');
  // No success schema: a 2XX without one (else a 200 is judged against the error schema); JSON bodies only.
  const post = doc.paths["/b"]!.post!;
  expect(Object.keys(post.responses).sort()).toEqual(["2XX", "default"]);
  expect(Object.keys(post.requestBody!.content)).toEqual(["application/json"]);
  // `list` has a default (Elysia fills it in): not required of the client.
  expect((post.requestBody!.content["application/json"] as { schema: { required: string[] } }).schema.required).toEqual(
    ["a"],
  );
});

test("a member the route checks itself is published as what it accepts", () => {
  const app = new Elysia().post("/o", ({ body }) => body, {
    body: t.Object({
      data: anyObject("settings"),
      list: checkedByRoute("a list", { type: "array", items: { type: "integer" } }),
    }),
  });
  const doc = sanitizeOpenApi({ openapi: "3.1.2", paths: toOpenAPISchema(app).paths }) as unknown as {
    paths: Record<string, Record<string, Op>>;
  };
  const schema = doc.paths["/o"]!.post!.requestBody!.content["application/json"] as {
    schema: { properties: Record<string, unknown> };
  };
  // Was `{description}` alone: every value, null included, although the route refuses all but an object.
  expect(schema.schema.properties.data).toEqual({
    description: "JSON object: settings",
    type: "object",
    additionalProperties: true,
  });
  expect(schema.schema.properties.list).toEqual({ description: "a list", type: "array", items: { type: "integer" } });
  expect(JSON.stringify(doc)).not.toContain("x-svc-documented-as");
});

test("request-body objects say they take unknown members: Elysia drops them, even where the schema says additionalProperties: false", async () => {
  const app = new Elysia().post("/d", ({ body }) => body, {
    body: t.Object({
      name: t.String(),
      layout: t.Array(t.Object({ id: t.String() })),
      strict: t.Object({ k: t.String() }, { additionalProperties: false }),
    }),
  });
  const doc = sanitizeOpenApi({ openapi: "3.1.2", paths: toOpenAPISchema(app).paths }) as unknown as {
    paths: Record<string, Record<string, Op>>;
  };
  const schema = (
    doc.paths["/d"]!.post!.requestBody!.content["application/json"] as {
      schema: {
        additionalProperties: unknown;
        properties: Record<string, { additionalProperties?: unknown; items?: { additionalProperties?: unknown } }>;
      };
    }
  ).schema;
  expect(schema.additionalProperties).toBe(true);
  expect(schema.properties.layout!.items!.additionalProperties).toBe(true);
  expect(schema.properties.strict!.additionalProperties).toBe(true);
  // What that describes: the route answers, the unknown members dropped.
  const r = await app.handle(
    new Request("http://localhost/d", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "n", layout: [], strict: { k: "v", z: 1 }, extra: 1 }),
    }),
  );
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual({ name: "n", layout: [], strict: { k: "v" } });
});
