import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import {
  canonicalFields,
  findField,
  normalizeFields,
  stableJson,
  validateFields,
  type FieldObject,
} from "./mapping-fields.ts";

const ok = { id: "call_id", name: "Call-ID", type: "string" };

/** The member a rejected list is blamed on (`details.fields[0]`). */
function blamed(raw: unknown): string {
  try {
    validateFields(raw);
  } catch (e) {
    if (e instanceof AppError && e.code === "VALIDATION") return ((e.details?.fields ?? []) as string[])[0]!;
    throw e;
  }
  return "(accepted)";
}

describe("validateFields", () => {
  // The messages come from the TypeBox schema (mapping-schema.ts) and the rules after it.
  test.each([
    [{ id: "x" }, "fields_mapping: must be an array of at most 500 field objects"],
    [[{ ...ok, formType: "input" }], "fields_mapping.0.formType: unknown member of a field object"],
    [[{ id: "a", type: "string" }], "fields_mapping.0.name: required: a label of 1-128 characters"],
    [
      [{ ...ok, type: "text" }],
      'fields_mapping.0.type: required: one of "string", "integer", "int", "number", "boolean"',
    ],
    [
      [{ ...ok, selector: [{ name: "a", value: true }] }],
      "fields_mapping.0.selector.0.value: must be a string (at most 256 characters) or a finite number",
    ],
    [
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a b" } }],
      "fields_mapping.0.virtual.path: must be a dotted path of segments made of letters, digits, _ and - (at most 256 characters)",
    ],
    [
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a", x: 1 } }],
      "fields_mapping.0.virtual.x: unknown member (kind, path, match)",
    ],
    [[{ ...ok, form_type: "select" }], 'fields_mapping.0.selector: required (non-empty) when form_type is "select"'],
    [[ok, ok], 'fields_mapping.1.id: duplicate field id "call_id"'],
    [
      Array.from({ length: 501 }, (_, i) => ({ ...ok, id: `f${i}` })),
      "fields_mapping: must be an array of at most 500 field objects",
    ],
  ])("%j → %s", (raw, message) => {
    expect(() => validateFields(raw)).toThrow(message);
  });

  test.each([
    ["not an array", "fields_mapping", { id: "x" }],
    ["entry not an object", "fields_mapping.0", ["call_id"]],
    ["missing id", "fields_mapping.0.id", [{ name: "A", type: "string" }]],
    ["id with a space", "fields_mapping.0.id", [{ ...ok, id: "call id" }]],
    ["missing name", "fields_mapping.0.name", [{ id: "a", type: "string" }]],
    ["unknown type", "fields_mapping.0.type", [{ ...ok, type: "text" }]],
    ["unknown form_type", "fields_mapping.0.form_type", [{ ...ok, form_type: "dropdown" }]],
    ["select without selector", "fields_mapping.0.selector", [{ ...ok, form_type: "select" }]],
    ["select with empty selector", "fields_mapping.0.selector", [{ ...ok, form_type: "select", selector: [] }]],
    ["option without value", "fields_mapping.0.form_default.0.value", [{ ...ok, form_default: [{ name: "INVITE" }] }]],
    ["option extra member", "fields_mapping.0.selector.0.x", [{ ...ok, selector: [{ name: "a", value: 1, x: 2 }] }]],
    ["position not a number", "fields_mapping.0.position", [{ ...ok, position: "1" }]],
    ["hide not a boolean", "fields_mapping.0.hide", [{ ...ok, hide: "yes" }]],
    ["unknown index", "fields_mapping.0.index", [{ ...ok, index: "unique" }]],
    ["unknown member", "fields_mapping.0.formType", [{ ...ok, formType: "input" }]],
    ["virtual not an object", "fields_mapping.0.virtual", [{ ...ok, virtual: "from_tag" }]],
    ["virtual unknown kind", "fields_mapping.0.virtual.kind", [{ ...ok, virtual: { kind: "column", path: "a" } }]],
    [
      "virtual path with a space",
      "fields_mapping.0.virtual.path",
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a b" } }],
    ],
    [
      "virtual path with an empty segment",
      "fields_mapping.0.virtual.path",
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a..b" } }],
    ],
    [
      "virtual path quoted",
      "fields_mapping.0.virtual.path",
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a.'b'" } }],
    ],
    [
      "virtual unknown match",
      "fields_mapping.0.virtual.match",
      [{ ...ok, virtual: { kind: "data_extra_json", path: "a", match: "regex" } }],
    ],
    ["duplicate id", "fields_mapping.1.id", [ok, { ...ok, name: "again" }]],
    [
      "second entry blamed by index",
      "fields_mapping.1.skip",
      [ok, { id: "b", name: "B", type: "int", form_type: "checkbox", skip: 1 }],
    ],
  ])("%s → 400 naming %s", (_name, field, raw) => {
    expect(blamed(raw)).toBe(field);
  });

  test("an id counts characters, not UTF-16 units: 128 emoji pass, 129 do not (strict and tolerant alike)", () => {
    const field = (n: number) => ({ ...ok, id: "😀".repeat(n) });
    expect(validateFields([field(128)])).toHaveLength(1);
    expect(blamed([field(129)])).toBe("fields_mapping.0.id");
    expect(normalizeFields([field(128), field(129)]).map((f) => [...f.id].length)).toEqual([128]);
  });

  test("accepts every property of the spec's Field object table, hyphenated virtual paths included", () => {
    const full = {
      id: "x_custom",
      name: "X-Custom",
      type: "string",
      form_type: "select",
      position: 2.5,
      hide: true,
      skip: false,
      selected: true,
      index: "secondary",
      sid_type: false,
      category: "headers",
      form_default: [{ name: "one", value: 1 }],
      selector: [{ name: "A", value: "a" }],
      virtual: { kind: "data_extra_json", path: "custom_headers.X-Custom", match: "present" },
    };
    expect(validateFields([full])).toEqual([full as FieldObject]);
  });

  test("a virtual block without match gets the spec default like", () => {
    expect(validateFields([{ ...ok, virtual: { kind: "data_extra_json", path: "from_tag" } }])[0]?.virtual).toEqual({
      kind: "data_extra_json",
      path: "from_tag",
      match: "like",
    });
  });
});

describe("normalizeFields", () => {
  test("keeps each member only when the schema takes it; options and virtual blocks member by member", () => {
    const stored = {
      id: "m",
      name: "",
      type: "int",
      form_type: "radio",
      position: "3",
      hide: "yes",
      selected: false,
      index: "unique",
      category: "x".repeat(65),
      sid_type: true,
      selector: [
        { name: "a", value: 1, note: "kept without note" },
        { name: "", value: 2 },
        { name: "b", value: true },
      ],
      form_default: "INVITE",
      virtual: { kind: "data_extra_json", path: "a.b", extra: 1 },
    };
    expect(normalizeFields([stored])).toEqual([
      {
        id: "m",
        name: "m",
        type: "int",
        selected: false,
        sid_type: true,
        selector: [{ name: "a", value: 1 }],
        virtual: { kind: "data_extra_json", path: "a.b", match: "like" },
      },
    ]);
    expect(
      normalizeFields([{ ...stored, virtual: { kind: "data_extra_json", path: "a.b", match: "regex" } }])[0]?.virtual,
    ).toBeUndefined();
  });

  test("fills name and type, drops invalid members, entries without id and duplicate ids", () => {
    expect(
      normalizeFields([
        { id: "time" },
        { name: "no id" },
        { id: "v", type: "float", hide: true, junk: 1 },
        { id: "time", name: "dup" },
        7,
      ]),
    ).toEqual([
      { id: "time", name: "time", type: "string" },
      { id: "v", name: "v", type: "string", hide: true },
    ]);
    expect(normalizeFields("not a list")).toEqual([]);
  });
});

describe("findField", () => {
  const fields = normalizeFields([
    { id: "call_id", name: "Call-ID", type: "string" },
    { id: "method", name: "Method", type: "string" },
    { id: "from_user", name: "From", type: "string" },
  ]);
  test.each([
    ["call_id", "call_id"],
    ["session_id", "call_id"],
    ["methods", "method"],
    ["caller", "from_user"],
    ["callee", undefined],
    ["constructor", undefined],
    ["nope", undefined],
  ])("%s → %p", (key, id) => {
    expect(findField(fields, key)?.id).toBe(id);
    expect(findField({ fieldsMapping: fields }, key)?.id).toBe(id);
  });
});

describe("semantic comparison", () => {
  test("key order, array order of fields and spelled-out defaults do not count; a changed value does", () => {
    const a = [
      { id: "time", name: "time", type: "string", position: 1 },
      { id: "usage", type: "number", name: "usage" },
    ];
    const b = [
      { type: "number", id: "usage" },
      { position: 1, id: "time" },
    ];
    expect(canonicalFields(a)).toBe(canonicalFields(b));
    expect(canonicalFields(a)).not.toBe(
      canonicalFields([
        { id: "time", position: 2 },
        { id: "usage", type: "number" },
      ]),
    );
    expect(stableJson({ b: 1, a: [2, { d: 1, c: undefined }] })).toBe('{"a":[2,{"d":1}],"b":1}');
  });
});
