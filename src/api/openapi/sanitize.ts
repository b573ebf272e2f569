/**
 * Corrections to the document @elysiajs/openapi generates from Elysia's route schemas, so that it is
 * valid OpenAPI 3.1 (checked by openapi-spec-validator in test/integration/openapi-valid.test.ts):
 *
 * - Elysia's `t.Integer`, `t.Numeric` and `t.BooleanString` accept the value as text too (query
 *   strings, form fields) and are emitted as `anyOf: [{type: "string", format: "integer", default: 0},
 *   {type: "integer"}]`: the document called about 150 integer fields strings, and the `default: 0`
 *   of the text branch is not a string. The text branch is a decoding detail: only the typed branch
 *   is published, with the outer keywords (description, bounds) kept.
 * - A `t.Void()` response became `content: {type: "void"}` (not a media-type map): a 204 has no
 *   content, so `content` is dropped.
 * - Each operation gets a `default` response: the error body of every status its route does not list;
 *   one that describes no success answer gets a `2XX` without a body schema.
 * - Request bodies are described as JSON only (the generator adds two form encodings).
 * - A member with a default is not `required` (Elysia fills it in: a dashboard without `layout`).
 * - A member the route checks itself (`t.Unknown` to Elysia, see `checkedByRoute` in schemas.ts) is
 *   published as what the route accepts.
 * - Every request-body object says `additionalProperties: true`: Elysia (normalize, its default)
 *   drops members a schema does not name, also where the schema says `additionalProperties: false`,
 *   and answers as usual. Elysia also writes `additionalProperties: false` into shared model
 *   schemas once a route is compiled, so the generated document said so depending on what ran
 *   before, and schemathesis took an unknown member for data the route must refuse ("schema-
 *   violating request accepted", seen in CI only).
 */
const CODED_AS_TEXT: Record<string, readonly string[]> = {
  integer: ["integer", "number"],
  numeric: ["number", "integer"],
  boolean: ["boolean"],
};

type Json = Record<string, unknown>;
const DOCUMENTED_AS = "x-svc-documented-as";
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `anyOf` of a text-coded branch and its typed branch → the typed branch (outer keywords kept). */
function collapseCoercion(schema: Json): Json {
  const anyOf = schema.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return schema;
  const [a, b] = anyOf as unknown[];
  for (const [text, typed] of [
    [a, b],
    [b, a],
  ] as const) {
    if (!isObject(text) || !isObject(typed) || text.type !== "string" || typeof text.format !== "string") continue;
    const types = CODED_AS_TEXT[text.format];
    if (!types || typeof typed.type !== "string" || !types.includes(typed.type)) continue;
    const { anyOf: _drop, ...outer } = schema;
    return { ...outer, ...typed };
  }
  return schema;
}

/** A member with a default is filled in by Elysia when absent: it is not required of the client. */
function optionalDefaults(schema: Json): Json {
  const { required, properties } = schema;
  if (!Array.isArray(required) || !isObject(properties)) return schema;
  const left = required.filter(
    (name) => !(typeof name === "string" && isObject(properties[name]) && "default" in properties[name]),
  );
  if (left.length === required.length) return schema;
  const { required: _drop, ...rest } = schema;
  return left.length > 0 ? { ...rest, required: left } : rest;
}

/** `{description, x-svc-documented-as: S}` → S with the description. */
function documentedAs(schema: Json): Json {
  const published = schema[DOCUMENTED_AS];
  if (!isObject(published)) return schema;
  return typeof schema.description === "string" ? { description: schema.description, ...published } : { ...published };
}

function walk(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(walk);
  if (!isObject(value)) return value;
  if (DOCUMENTED_AS in value) return walk(documentedAs(value));
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) out[k] = walk(v);
  return optionalDefaults(collapseCoercion(out));
}

/**
 * Every operation also answers errors its route schema does not list (401 from the guard, 413,
 * 429, a 5xx): a `default` response with the one error body (src/api/errors.ts) describes them.
 */
const DEFAULT_ERROR = {
  description: "Any other error: {error: CODE, message}; a 5xx adds request_id (also in the X-Request-Id header)",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error", "message"],
        properties: { error: { type: "string" }, message: { type: "string" }, request_id: { type: "string" } },
        additionalProperties: true,
      },
    },
  },
};

/** Request-body objects (nested ones too) take unknown members: Elysia drops them. */
function allowUnknownMembers(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const s of schema) allowUnknownMembers(s);
    return;
  }
  if (!isObject(schema)) return;
  if (isObject(schema.properties)) schema.additionalProperties = true;
  for (const key of ["properties", "items", "anyOf", "oneOf", "allOf"] as const) {
    const v = schema[key];
    if (key === "properties" && isObject(v)) for (const member of Object.values(v)) allowUnknownMembers(member);
    else allowUnknownMembers(v);
  }
}

/** What an operation without a described success answer says about it (an image, a file, a stream). */
const UNDESCRIBED_SUCCESS = { description: "Success; the body is not described here" };

function fixOperations(paths: Json): void {
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue;
    for (const op of Object.values(item)) {
      if (!isObject(op)) continue;
      const responses: Json = isObject(op.responses) ? op.responses : (op.responses = {});
      for (const r of Object.values(responses)) {
        // `content: {type: "void"}` is not a media-type map: a 204 has no content.
        if (isObject(r) && isObject(r.content) && typeof r.content.type === "string") delete r.content;
      }
      // Without it a success answer would be judged against the error schema of `default`.
      if (!Object.keys(responses).some((k) => k.startsWith("2"))) responses["2XX"] = UNDESCRIBED_SUCCESS;
      responses.default ??= DEFAULT_ERROR;
      // The API takes JSON bodies; the generator also lists form encodings, whose text values
      // (active=false) a JSON schema does not describe.
      const body = isObject(op.requestBody) ? op.requestBody : undefined;
      if (body && isObject(body.content) && "application/json" in body.content) {
        const json = body.content["application/json"];
        body.content = { "application/json": json };
        if (isObject(json)) allowUnknownMembers(json.schema);
      }
    }
  }
}

/** A corrected deep copy of a generated OpenAPI document. */
export function sanitizeOpenApi<T extends Json>(doc: T): T {
  const out = walk(doc) as T;
  if (isObject(out.paths)) fixOperations(out.paths);
  return out;
}
