import { describe, expect, test } from "bun:test";
import { buildSearchBody, formKind, visibleFields, type MappingField } from "./search-body.ts";

const f = (id: string, extra: Partial<MappingField> = {}): MappingField => ({ id, name: id, type: "string", ...extra });
const RANGE = { from: 1_000.4, to: 2_000.2 };
const SIP = { hepid: 1, profile: "call" };

describe("formKind", () => {
  test.each([
    [f("a"), "input"],
    [f("a", { form_type: "input_multi_select" }), "multi"],
    [f("a", { form_type: "multiselect" }), "multi"],
    [f("a", { form_type: "select" }), "select"],
    [f("a", { form_type: "datetime" }), "datetime"],
    [f("a", { form_type: "switch" }), "switch"],
    [f("a", { form_type: "checkbox" }), "checkbox"],
    [f("a", { form_type: "loki-field" }), "input"],
    [f("a", { type: "boolean" }), "switch"],
    [f("a", { virtual: { kind: "data_extra_json", path: "x", match: "absent" } }), "flag-absent"],
    [f("a", { virtual: { kind: "data_extra_json", path: "x", match: "present" } }), "flag-present"],
    [f("a", { virtual: { kind: "data_extra_json", path: "x", match: "like" } }), "input"],
  ])("%o → %s", (field, kind) => expect(formKind(field)).toBe(kind as ReturnType<typeof formKind>));
});

describe("visibleFields", () => {
  const fields = [
    f("call_id", { selected: true }),
    f("src_ip"),
    f("tag", { hide: true }),
    f("gone", { skip: true, selected: true }),
  ];
  test("selected fields first, never skipped ones", () =>
    expect(visibleFields(fields).map((x) => x.id)).toEqual(["call_id"]));
  test("nothing selected: every field not hidden", () =>
    expect(visibleFields(fields.map((x) => ({ ...x, selected: false }))).map((x) => x.id)).toEqual([
      "call_id",
      "src_ip",
    ]));
  test("the user's choice wins, hidden ones included", () =>
    expect(visibleFields(fields, ["tag", "src_ip"]).map((x) => x.id)).toEqual(["src_ip", "tag"]));
});

describe("buildSearchBody", () => {
  const fields = [
    f("call_id"),
    f("method", { form_type: "input_multi_select" }),
    f("response_code", { type: "integer", form_type: "input_multi_select" }),
    f("src_port", { type: "integer" }),
    f("from_tag", { virtual: { kind: "data_extra_json", path: "from_tag", match: "equals" } }),
    f("no_ua", { virtual: { kind: "data_extra_json", path: "ua", match: "absent" } }),
    f("has_xcid", { virtual: { kind: "data_extra_json", path: "custom_headers.X-CID", match: "present" } }),
    f("status_code", { type: "integer", form_type: "select" }),
    f("since", { form_type: "datetime" }),
    f("flag", { type: "boolean", form_type: "switch" }),
  ];

  test("empty controls are left out; proto, profile, limit and a whole-ms range are set", () => {
    expect(buildSearchBody(SIP, fields, { call_id: "  ", method: "", flag: false }, RANGE, 200)).toEqual({
      filter: { proto_type: 1, event_type: "call" },
      param: { limit: 200 },
      timestamp: { from: 1000, to: 2001 },
    });
  });

  test("one multi-select value under the singular key, several under the plural (spec rule 1)", () => {
    const one = buildSearchBody(SIP, fields, { method: "INVITE" }, RANGE, 10).filter;
    expect(one.method).toBe("INVITE");
    expect(one.methods).toBeUndefined();
    const many = buildSearchBody(
      SIP,
      fields,
      { method: "INVITE, BYE;ACK", response_code: ["486", "603"] },
      RANGE,
      10,
    ).filter;
    expect(many.methods).toEqual(["INVITE", "BYE", "ACK"]);
    expect(many.response_codes).toEqual([486, 603]);
    expect(many.method).toBeUndefined();
  });

  test("numbers are typed, text stays text", () => {
    const b = buildSearchBody(
      SIP,
      fields,
      { src_port: "5060", call_id: " abc@host ", status_code: "2" },
      RANGE,
      10,
    ).filter;
    expect(b.src_port).toBe(5060);
    expect(b.call_id).toBe("abc@host");
    expect(b.status_code).toBe(2);
    expect(buildSearchBody(SIP, fields, { src_port: "50x" }, RANGE, 10).filter.src_port).toBe("50x");
  });

  test("virtual fields: like/equals under filter.virtual, absent/present as id lists", () => {
    const b = buildSearchBody(SIP, fields, { from_tag: "f-1", no_ua: true, has_xcid: true }, RANGE, 10).filter;
    expect(b.virtual).toEqual({ from_tag: "f-1" });
    expect(b.virtual_absent).toEqual(["no_ua"]);
    expect(b.virtual_present).toEqual(["has_xcid"]);
    expect(b.from_tag).toBeUndefined();
  });

  test("datetime as epoch ms, switches as booleans", () => {
    const b = buildSearchBody(SIP, fields, { since: "2026-01-02T03:04:05Z", flag: true }, RANGE, 10).filter;
    expect(b.since).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(b.flag).toBe(true);
  });
});
