import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import { normalizeFields } from "./mapping-fields.ts";
import { applyUserOverrides, parseOverrideList, readUserOverrides, widgetFields } from "./user-mapping.ts";

const fields = normalizeFields([
  { id: "call_id", name: "Call-ID", type: "string", position: 10, selected: true, sid_type: true },
  { id: "method", name: "Method", type: "string", position: 20, form_type: "input_multi_select" },
  { id: "secret", name: "Internal", type: "string", position: 5, skip: true },
  { id: "payload", name: "Payload", type: "string", position: 30, hide: true },
  { id: "loose", name: "No position", type: "string" },
]);

function blamed(body: unknown): string {
  try {
    parseOverrideList(body, fields);
  } catch (e) {
    if (e instanceof AppError && e.code === "VALIDATION") return ((e.details?.fields ?? []) as string[])[0]!;
    throw e;
  }
  return "(accepted)";
}

describe("parseOverrideList", () => {
  test.each([
    [[], "(body): must be a JSON object {fields: [...]}"],
    [{ fields: [], name: "x" }, "name: unknown member (the body has only fields)"],
    [{}, "fields: required: an array of {id, selected?, position?}"],
    [{ fields: [{ id: "payload", hide: false }] }, "fields.0.hide: only selected and position may be overridden"],
    [{ fields: [{ id: "nope" }] }, "fields.0.id: must be the id of a field of this mapping"],
    [{ fields: [{ id: "method", selected: "yes" }] }, "fields.0.selected: must be a boolean"],
    [{ fields: [{ id: "method", position: "1" }] }, "fields.0.position: must be a finite number"],
  ])("%j → %s", (body, message) => {
    expect(() => parseOverrideList(body, fields)).toThrow(message);
  });

  test.each([
    ["not an object", "(body)", []],
    ["extra top-level member", "name", { fields: [], name: "x" }],
    ["fields missing", "fields", {}],
    ["entry not an object", "fields.0", { fields: ["call_id"] }],
    ["hide cannot be overridden", "fields.0.hide", { fields: [{ id: "payload", hide: false }] }],
    ["type cannot be overridden", "fields.0.type", { fields: [{ id: "method", type: "integer" }] }],
    ["unknown field id", "fields.0.id", { fields: [{ id: "nope", selected: true }] }],
    ["inherited name is not a field", "fields.0.id", { fields: [{ id: "constructor", selected: true }] }],
    ["duplicate id", "fields.1.id", { fields: [{ id: "method" }, { id: "method", position: 1 }] }],
    ["selected not boolean", "fields.0.selected", { fields: [{ id: "method", selected: "yes" }] }],
    ["position not finite", "fields.0.position", { fields: [{ id: "method", position: "1" }] }],
  ])("%s → 400 naming %s", (_n, field, body) => {
    expect(blamed(body)).toBe(field);
  });

  test("keeps selected and position per id", () => {
    expect({
      ...parseOverrideList(
        {
          fields: [
            { id: "method", selected: true, position: 1 },
            { id: "call_id", selected: false },
          ],
        },
        fields,
      ),
    }).toEqual({
      method: { selected: true, position: 1 },
      call_id: { selected: false },
    });
  });
});

describe("applying a layout", () => {
  test("a stored document can change only selected and position", () => {
    const o = readUserOverrides({
      fields: {
        method: { selected: true, position: 1, hide: true, type: "integer", name: "X" },
        call_id: "junk",
        ghost: { selected: true },
      },
    });
    expect({ ...o }).toEqual({ method: { selected: true, position: 1 }, ghost: { selected: true } });
    const applied = applyUserOverrides(fields, o);
    expect(applied.find((f) => f.id === "method")).toEqual({
      id: "method",
      name: "Method",
      type: "string",
      position: 1,
      form_type: "input_multi_select",
      selected: true,
    });
    expect(applied.map((f) => f.id)).toEqual(fields.map((f) => f.id));
    expect(fields.find((f) => f.id === "method")?.position).toBe(20);
  });

  test("widget fields: skip dropped, hide kept as a flag, ordered by position with unpositioned last", () => {
    const w = widgetFields(fields, readUserOverrides({ fields: { payload: { position: 1 } } }));
    expect(w.map((f) => f.id)).toEqual(["payload", "call_id", "method", "loose"]);
    expect(w[0]?.hide).toBe(true);
  });

  test("a __proto__ field id is stored as data, not as a prototype", () => {
    const o = readUserOverrides(JSON.parse('{"fields": {"__proto__": {"selected": true}}}'));
    expect(Object.keys(o)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(o)).toBeNull();
  });
});
