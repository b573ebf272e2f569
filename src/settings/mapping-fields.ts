import { invalidField } from "./db.ts";
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  checkBody,
  FieldInputSchema,
  FieldsInputSchema,
  MAX_FIELDS,
  MAX_OPTIONS,
  OptionInput,
  VirtualInput,
  type FIELD_INDEXES,
  type FIELD_TYPES,
  type FORM_TYPES,
  type VIRTUAL_MATCHES,
} from "./mapping-schema.ts";

/**
 * Field objects of a mapping row (docs/API.md "Field object" and "Virtual block"): the JSON documents
 * in `mapping_schema.fields_mapping` that drive the search forms. Property names are the wire names
 * (`form_type`, `sid_type`), because these objects are stored and served as they are.
 *
 * Two readers: `validateFields` is strict (API input: the TypeBox schema of mapping-schema.ts, then
 * the rules a schema cannot state; every bad member is a 400 naming `fields_mapping.<n>.<member>`);
 * `normalizeFields` is tolerant (stored rows, automatic sync): it keeps what is valid, fills defaults
 * (name = id, type = string, virtual.match = like) and drops the rest.
 */
export {
  FIELD_INDEXES,
  FIELD_TYPES,
  FORM_TYPES,
  MAX_FIELDS,
  VIRTUAL_KINDS,
  VIRTUAL_MATCHES,
  VIRTUAL_PATH_RE,
} from "./mapping-schema.ts";

export type FieldType = (typeof FIELD_TYPES)[number];
export type FormType = (typeof FORM_TYPES)[number];
export type FieldIndex = (typeof FIELD_INDEXES)[number];
export type VirtualMatch = (typeof VIRTUAL_MATCHES)[number];

/** A preset (`form_default`) or choice (`selector`) of a form field. */
export type FieldOption = Static<typeof OptionInput>;

/** Where a virtual field reads from: a dotted JSON path under `data_extra` (`match` filled in). */
export type VirtualBlock = Required<Static<typeof VirtualInput>>;

/** A stored field object: what FieldInputSchema accepts, its virtual block's `match` filled in. */
export type FieldObject = Omit<Static<typeof FieldInputSchema>, "virtual"> & { virtual?: VirtualBlock };

/** What a writer may hand in: the defaults of `normalizeFields` fill the rest. */
export type FieldInput = Omit<FieldObject, "name" | "type" | "virtual"> & {
  name?: string;
  type?: FieldType;
  virtual?: Omit<VirtualBlock, "match"> & { match?: VirtualMatch };
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What the schema says of one member (mapping-schema.ts): the tolerant reader keeps exactly that. */
const F = FieldInputSchema.properties;
const fits = (schema: TSchema, v: unknown) => v !== undefined && Value.Check(schema, v);
const KEPT_AS_IS = ["form_type", "position", "hide", "skip", "selected", "index", "sid_type", "category"] as const;

function readOptions(raw: unknown): FieldOption[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw
    .slice(0, MAX_OPTIONS)
    .filter(
      (o): o is FieldOption =>
        isObject(o) && fits(OptionInput.properties.name, o.name) && fits(OptionInput.properties.value, o.value),
    )
    .map((o) => ({ name: o.name, value: o.value }));
}

function readVirtual(raw: unknown): VirtualBlock | undefined {
  const V = VirtualInput.properties;
  if (!isObject(raw) || !fits(V.kind, raw.kind) || !fits(V.path, raw.path)) return undefined;
  if (raw.match !== undefined && !fits(V.match, raw.match)) return undefined;
  return {
    kind: "data_extra_json",
    path: raw.path as string,
    match: (raw.match as VirtualMatch | undefined) ?? "like",
  };
}

/** One field object with what is valid kept and defaults filled; undefined without a usable id. */
function readField(raw: unknown): FieldObject | undefined {
  if (!isObject(raw) || !fits(F.id, raw.id)) return undefined;
  const id = raw.id as string;
  const f: FieldObject = {
    id,
    name: fits(F.name, raw.name) ? (raw.name as string) : id,
    type: fits(F.type, raw.type) ? (raw.type as FieldType) : "string",
  };
  const out = f as unknown as Record<string, unknown>;
  for (const k of KEPT_AS_IS) if (fits(F[k], raw[k])) out[k] = raw[k];
  for (const k of ["form_default", "selector"] as const) {
    const o = readOptions(raw[k]);
    if (o) f[k] = o;
  }
  const v = readVirtual(raw.virtual);
  if (v) f.virtual = v;
  return f;
}

function readFields(raw: unknown): FieldObject[] {
  const out: FieldObject[] = [];
  const seen = new Set<string>();
  for (const r of Array.isArray(raw) ? raw.slice(0, MAX_FIELDS) : []) {
    const f = readField(r);
    if (!f || seen.has(f.id)) continue;
    seen.add(f.id);
    out.push(f);
  }
  return out;
}

/**
 * Strict check of API input; throws VALIDATION (400) naming the first bad member, e.g.
 * `fields_mapping.3.selector`: the schema first, then unique ids and a select's options.
 */
export function validateFields(raw: unknown, path = "fields_mapping"): FieldObject[] {
  checkBody(FieldsInputSchema, raw, path);
  const list = raw as Array<{ id: string; form_type?: string; selector?: unknown[] }>;
  const seen = new Set<string>();
  list.forEach((f, i) => {
    if (f.form_type === "select" && !f.selector?.length)
      throw invalidField(`${path}.${i}.selector`, 'required (non-empty) when form_type is "select"');
    if (seen.has(f.id)) throw invalidField(`${path}.${i}.id`, `duplicate field id "${f.id}"`);
    seen.add(f.id);
  });
  return readFields(raw);
}

/** Tolerant read of stored or generated fields: defaults filled, invalid members and duplicate ids dropped. */
export function normalizeFields(raw: unknown): FieldObject[] {
  return readFields(raw);
}

/**
 * Alternative filter keys (docs/API.md "Search form request", SIP field ids): `session_id` for `call_id`, `caller` and
 * `callee` for the user fields, and the plural keys a multi-select sends with several values.
 */
const ALIASES: Readonly<Record<string, string>> = {
  session_id: "call_id",
  caller: "from_user",
  callee: "to_user",
  methods: "method",
  response_codes: "response_code",
  types: "type",
  node_id: "node",
};

/** The field a filter key refers to: by id, else through the spec's alias and plural keys. */
export function findField(
  mapping: { readonly fieldsMapping: readonly FieldObject[] } | readonly FieldObject[],
  fieldId: string,
): FieldObject | undefined {
  const fields = "fieldsMapping" in mapping ? mapping.fieldsMapping : mapping;
  const exact = fields.find((f) => f.id === fieldId);
  if (exact) return exact;
  const alias = Object.hasOwn(ALIASES, fieldId) ? ALIASES[fieldId] : undefined;
  return alias === undefined ? undefined : fields.find((f) => f.id === alias);
}

/** JSON with object keys sorted: equal text ⇔ semantically equal document (key order ignored). */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (isObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/**
 * Comparison form of a field list (docs/LINE-PROTOCOL.md "Automatic mapping rows": `fields_mapping` is rewritten "only when the JSON differs
 * in meaning"): normalized, so defaults equal their explicit form; ordered by id, because the order
 * shown comes from `position`, not from the array.
 */
export function canonicalFields(raw: unknown): string {
  return stableJson(normalizeFields(raw).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
}
