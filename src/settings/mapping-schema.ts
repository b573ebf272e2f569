import { Type, type TLiteral, type TSchema, type TUnion } from "@sinclair/typebox";
import { Value, ValueErrorType } from "@sinclair/typebox/value";
import { invalidField } from "./db.ts";

/**
 * Request bodies of the mapping routes as TypeBox schemas (the API's schema library, Elysia's `t`):
 * a list of field objects (`fields_mapping`, docs/API.md "Field object" and "Virtual block") and a
 * user's layout (`{fields: [{id, selected?, position?}]}`). `checkBody` turns the first schema error
 * into a 400 naming the member (`fields_mapping.3.virtual.path: must be ...`): each schema carries
 * its message in `x-why`, objects their unknown-member message in `x-unknown`. The rules a schema
 * cannot state (unique ids, a select needs options, ids of this mapping) stay with the callers.
 * The same schemas are published in the OpenAPI document (src/api/mappings/model.ts).
 */
export const FIELD_TYPES = ["string", "integer", "int", "number", "boolean"] as const;
export const FORM_TYPES = [
  "input",
  "input_multi_select",
  "multiselect",
  "select",
  "datetime",
  "loki-field",
  "switch",
  "checkbox",
] as const;
export const FIELD_INDEXES = ["none", "secondary", "primary"] as const;
export const VIRTUAL_KINDS = ["data_extra_json"] as const;
export const VIRTUAL_MATCHES = ["like", "equals", "absent", "present"] as const;
export const MAX_FIELDS = 500;
export const MAX_OPTIONS = 500;
/**
 * Filter keys travel as JSON member names and URL-free text: 1-128 characters (a surrogate pair
 * counts as one, as TypeBox runs patterns without the u flag), no whitespace, quotes or backslashes.
 */
export const ID_RE = /^(?:[^\s\u0000-\u001f"'`\\\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF]){1,128}$/;
/** Spec "Virtual block": segments of letters, digits, `_`, `-`, joined by dots. */
export const VIRTUAL_PATH_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

const listText = (list: readonly string[]) => list.map((x) => `"${x}"`).join(", ");
/** One of `list`; typed as the union of its literals, so the types derived by Static<> are exact. */
const oneOf = <T extends readonly string[]>(list: T, why: string) =>
  Type.Union(
    list.map((v) => Type.Literal(v)),
    { "x-why": why },
  ) as TUnion<TLiteral<T[number]>[]>;
const bool = () => Type.Boolean({ "x-why": "must be a boolean" });
const finite = () => Type.Number({ "x-why": "must be a finite number" });

export const OptionInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, "x-why": "must be a string of 1-128 characters" }),
    value: Type.Union([Type.String({ maxLength: 256 }), Type.Number()], {
      "x-why": "must be a string (at most 256 characters) or a finite number",
    }),
  },
  {
    additionalProperties: false,
    "x-why": "must be an object {name, value}",
    "x-unknown": "unknown member (an option has name and value)",
  },
);
const OptionsInput = Type.Array(OptionInput, {
  maxItems: MAX_OPTIONS,
  "x-why": `must be an array of at most ${MAX_OPTIONS} options {name, value}`,
});

export const VirtualInput = Type.Object(
  {
    kind: oneOf(VIRTUAL_KINDS, `must be ${listText(VIRTUAL_KINDS)}`),
    path: Type.String({
      maxLength: 256,
      pattern: VIRTUAL_PATH_RE.source,
      "x-why": "must be a dotted path of segments made of letters, digits, _ and - (at most 256 characters)",
    }),
    match: Type.Optional(oneOf(VIRTUAL_MATCHES, `must be one of ${listText(VIRTUAL_MATCHES)}`)),
  },
  {
    additionalProperties: false,
    "x-why": "must be an object {kind, path, match}",
    "x-unknown": "unknown member (kind, path, match)",
  },
);

/** One field object as a writer hands it in (`match` of a virtual block defaults to like). */
export const FieldInputSchema = Type.Object(
  {
    id: Type.String({
      pattern: ID_RE.source,
      "x-why": "must be a string of 1-128 characters without whitespace, quotes or backslashes",
    }),
    name: Type.String({ minLength: 1, maxLength: 128, "x-why": "required: a label of 1-128 characters" }),
    type: oneOf(FIELD_TYPES, `required: one of ${listText(FIELD_TYPES)}`),
    form_type: Type.Optional(oneOf(FORM_TYPES, `must be one of ${listText(FORM_TYPES)}`)),
    position: Type.Optional(finite()),
    hide: Type.Optional(bool()),
    skip: Type.Optional(bool()),
    selected: Type.Optional(bool()),
    index: Type.Optional(oneOf(FIELD_INDEXES, `must be one of ${listText(FIELD_INDEXES)}`)),
    sid_type: Type.Optional(bool()),
    category: Type.Optional(Type.String({ maxLength: 64, "x-why": "must be a string of at most 64 characters" })),
    form_default: Type.Optional(OptionsInput),
    selector: Type.Optional(OptionsInput),
    virtual: Type.Optional(VirtualInput),
  },
  { additionalProperties: false, "x-why": "must be a field object", "x-unknown": "unknown member of a field object" },
);

export const FieldsInputSchema = Type.Array(FieldInputSchema, {
  maxItems: MAX_FIELDS,
  "x-why": `must be an array of at most ${MAX_FIELDS} field objects`,
});

/** `PUT /me/mappings/:key`: a user may override only `selected` and `position` (docs/API.md "Users and settings"). */
export const OverrideListSchema = Type.Object(
  {
    fields: Type.Array(
      Type.Object(
        {
          id: Type.String({ "x-why": "must be the id of a field of this mapping" }),
          selected: Type.Optional(bool()),
          position: Type.Optional(finite()),
        },
        {
          additionalProperties: false,
          "x-why": "must be an object {id, selected?, position?}",
          "x-unknown": "only selected and position may be overridden",
        },
      ),
      { "x-why": "required: an array of {id, selected?, position?}" },
    ),
  },
  {
    additionalProperties: false,
    "x-why": "must be a JSON object {fields: [...]}",
    "x-unknown": "unknown member (the body has only fields)",
  },
);

/**
 * Throws VALIDATION (400) for the first schema error of `value`, naming the member as
 * `<base>.<index>.<member>` (JSON pointer `/3/virtual/path` under `base`), with the schema's message.
 */
export function checkBody(schema: TSchema, value: unknown, base: string): void {
  const e = Value.Errors(schema, value).First();
  if (!e) return;
  const member = e.path
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const path = [base, ...member].filter((s) => s !== "").join(".") || "(body)";
  const s = e.schema as Record<string, unknown>;
  const why = e.type === ValueErrorType.ObjectAdditionalProperties ? s["x-unknown"] : s["x-why"];
  throw invalidField(path, typeof why === "string" ? why : e.message);
}
