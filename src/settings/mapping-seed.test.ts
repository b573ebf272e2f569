import { describe, expect, test } from "bun:test";
import { findField, validateFields } from "./mapping-fields.ts";
import { SIP_METHODS, seedMappingRows } from "./mapping-seed.ts";

const rows = seedMappingRows();
const row = (hepid: number, profile: string) => rows.find((r) => r.hepid === hepid && r.profile === profile)!;

describe("built-in mappings", () => {
  test("cover the protocol types of docs/API.md with stable, distinct guids", () => {
    expect(rows.map((r) => `${r.hepid}_${r.profile}`)).toEqual([
      "1_call",
      "1_registration",
      "1_default",
      "5_default",
      "34_default",
      "35_default",
      "53_default",
      "100_default",
      "200_default",
      "201_default",
      "202_default",
    ]);
    expect(new Set(rows.map((r) => r.guid)).size).toBe(rows.length);
    expect(seedMappingRows().map((r) => r.guid)).toEqual(rows.map((r) => r.guid));
  });

  test.each(rows.map((r) => [`${r.hepid}_${r.profile}`, r] as const))(
    "%s passes the strict API validation unchanged",
    (_k, r) => {
      expect(validateFields(r.fieldsMapping)).toEqual(r.fieldsMapping as never);
    },
  );

  test("SIP call: call_id is the correlation field; multi-selects carry presets; tags are virtual equals", () => {
    const call = row(1, "call");
    const sid = call.fieldsMapping!.filter((f) => f.sid_type);
    expect(sid.map((f) => f.id)).toEqual(["call_id"]);
    expect(findField(call.fieldsMapping as never, "methods")?.form_default?.map((o) => o.value)).toEqual(SIP_METHODS);
    const codes = findField(call.fieldsMapping as never, "response_codes")?.form_default?.map((o) => o.value);
    expect(codes).toEqual([100, 180, 183, 200, 401, 403, 404, 407, 408, 480, 486, 487, 500, 503, 603]);
    for (const id of ["from_tag", "to_tag"]) {
      expect(findField(call.fieldsMapping as never, id)?.virtual).toEqual({
        kind: "data_extra_json",
        path: id,
        match: "equals",
      });
    }
    for (const id of [
      "from_user",
      "to_user",
      "src_ip",
      "dst_ip",
      "src_port",
      "dst_port",
      "user_agent",
      "ruri_user",
      "node_name",
      "capture_id",
      "payload",
      "cseq_method",
    ]) {
      expect(findField(call.fieldsMapping as never, id)?.id).toBe(id);
    }
  });

  test("SIP registration has aor, contact, expires and user_agent; OTLP rows have their columns", () => {
    const ids = (hepid: number, profile: string) => row(hepid, profile).fieldsMapping!.map((f) => f.id);
    expect(ids(1, "registration")).toEqual(
      expect.arrayContaining(["aor", "contact", "expires", "user_agent", "call_id"]),
    );
    expect(ids(1, "call")).not.toContain("aor");
    expect(ids(200, "default")).toEqual(expect.arrayContaining(["trace_id", "name", "service_name"]));
    expect(ids(201, "default")).toEqual(expect.arrayContaining(["name", "type", "service_name"]));
    expect(ids(202, "default")).toEqual(
      expect.arrayContaining(["trace_id", "service_name", "severity_number", "body"]),
    );
  });
});
