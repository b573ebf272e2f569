/**
 * The search form model (docs/API.md "Field object", "Search form request"): which fields a form
 * shows and how its values become `POST /transactions/search` bodies. Pure; see search-body.test.ts.
 */
// A field object of a mapping row is the server's type (imported as a type only).
import type { FieldObject, FieldOption } from "../../../src/settings/mapping-fields.ts";

export type { FieldOption };
export type MappingField = FieldObject;

/** What a control of the form holds: text, several values, a flag, or nothing. */
export type FieldValue = string | string[] | boolean | undefined;

export type FormKind =
  | "input"
  | "multi"
  | "select"
  | "datetime"
  | "switch"
  | "checkbox"
  | "flag-absent"
  | "flag-present";

/** The control a field is drawn with (`multiselect` is the legacy alias; `loki-field` is a text query). */
export function formKind(f: MappingField): FormKind {
  if (f.virtual?.match === "absent") return "flag-absent";
  if (f.virtual?.match === "present") return "flag-present";
  switch (f.form_type) {
    case "input_multi_select":
    case "multiselect":
      return "multi";
    case "select":
      return "select";
    case "datetime":
      return "datetime";
    case "switch":
      return "switch";
    case "checkbox":
      return "checkbox";
    default:
      return f.type === "boolean" ? "switch" : "input";
  }
}

/**
 * Fields shown in the form: the user's choice when they made one, else those marked `selected`,
 * else every field not hidden. `skip` never shows (the server already drops it).
 */
export function visibleFields(fields: readonly MappingField[], chosen?: readonly string[]): MappingField[] {
  const usable = fields.filter((f) => !f.skip);
  if (chosen && chosen.length > 0) return usable.filter((f) => chosen.includes(f.id));
  const selected = usable.filter((f) => f.selected);
  return selected.length > 0 ? selected : usable.filter((f) => !f.hide);
}

const numeric = (f: MappingField) => f.type === "integer" || f.type === "int" || f.type === "number";

/** A typed value: numbers for numeric fields when the text is a number (the server compares typed). */
function typed(f: MappingField, v: string): string | number {
  const t = v.trim();
  return numeric(f) && t !== "" && Number.isFinite(Number(t)) ? Number(t) : t;
}

export interface SearchBody {
  filter: Record<string, unknown> & { proto_type: number; event_type: string };
  param: { limit: number };
  timestamp: { from: number; to: number };
}

/**
 * Builds the structured search body. Empty controls are left out. Rules of docs/API.md "Search form request": a
 * multi-select with one value goes under the singular key (`method`), with several under the plural
 * (`methods`); virtual fields of match like/equals go under `filter.virtual`, absent/present flags
 * into `virtual_absent` / `virtual_present`; datetime values are epoch ms.
 */
export function buildSearchBody(
  proto: { hepid: number; profile: string },
  fields: readonly MappingField[],
  values: Readonly<Record<string, FieldValue>>,
  range: { from: number; to: number },
  limit: number,
): SearchBody {
  const filter: SearchBody["filter"] = { proto_type: proto.hepid, event_type: proto.profile };
  const virtual: Record<string, string> = {};
  const absent: string[] = [];
  const present: string[] = [];
  for (const f of fields) {
    const v = values[f.id];
    if (v === undefined || v === "" || v === false || (Array.isArray(v) && v.length === 0)) continue;
    const kind = formKind(f);
    if (kind === "flag-absent") {
      if (v === true) absent.push(f.id);
      continue;
    }
    if (kind === "flag-present") {
      if (v === true) present.push(f.id);
      continue;
    }
    if (f.virtual) {
      const text = Array.isArray(v) ? v.join(";") : String(v);
      if (text.trim() !== "") virtual[f.id] = text.trim();
      continue;
    }
    if (kind === "multi") {
      const list = (Array.isArray(v) ? v : String(v).split(/[;,]/)).map((x) => x.trim()).filter((x) => x !== "");
      if (list.length === 1) filter[f.id] = typed(f, list[0]!);
      else if (list.length > 1) filter[`${f.id}s`] = list.map((x) => typed(f, x));
      continue;
    }
    if (kind === "switch" || kind === "checkbox") {
      filter[f.id] = v === true;
      continue;
    }
    if (kind === "datetime") {
      const ms = new Date(String(v)).getTime();
      if (!Number.isNaN(ms)) filter[f.id] = ms;
      continue;
    }
    if (typeof v === "string" && v.trim() !== "") filter[f.id] = typed(f, v);
  }
  if (Object.keys(virtual).length > 0) filter.virtual = virtual;
  if (absent.length > 0) filter.virtual_absent = absent;
  if (present.length > 0) filter.virtual_present = present;
  return { filter, param: { limit }, timestamp: { from: Math.floor(range.from), to: Math.ceil(range.to) } };
}
