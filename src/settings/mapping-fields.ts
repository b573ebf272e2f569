import { invalidField } from "./db.ts";
import { checkBody, FIELD_INDEXES, FIELD_TYPES, FieldsInputSchema, FORM_TYPES, ID_RE, MAX_FIELDS, MAX_OPTIONS, VIRTUAL_KINDS, VIRTUAL_MATCHES, VIRTUAL_PATH_RE } from "./mapping-schema.ts";

/**
 * Field objects of a mapping row (spec doc 1, "Field object" and "Virtual block"): the JSON documents
 * in `mapping_schema.fields_mapping` that drive the search forms. Property names are the wire names
 * (`form_type`, `sid_type`), because these objects are stored and served as they are.
 *
 * Two readers: `validateFields` is strict (API input: the TypeBox schema of mapping-schema.ts, then
 * the rules a schema cannot state; every bad member is a 400 naming `fields_mapping.<n>.<member>`);
 * `normalizeFields` is tolerant (stored rows, automatic sync): it keeps what is valid, fills defaults
 * (name = id, type = string, virtual.match = like) and drops the rest.
 */
export { FIELD_INDEXES, FIELD_TYPES, FORM_TYPES, MAX_FIELDS, VIRTUAL_KINDS, VIRTUAL_MATCHES, VIRTUAL_PATH_RE } from "./mapping-schema.ts";

export type FieldType = (typeof FIELD_TYPES)[number];
export type FormType = (typeof FORM_TYPES)[number];
export type FieldIndex = (typeof FIELD_INDEXES)[number];
export type VirtualMatch = (typeof VIRTUAL_MATCHES)[number];

/** A preset (`form_default`) or choice (`selector`) of a form field. */
export interface FieldOption {
  name: string;
  value: string | number;
}

/** Where a virtual field reads from: a dotted JSON path under `data_extra`. */
export interface VirtualBlock {
  kind: "data_extra_json";
  path: string;
  match: VirtualMatch;
}

export interface FieldObject {
  /** Filter key, sent as `filter.<id>`. */
  id: string;
  name: string;
  type: FieldType;
  form_type?: FormType;
  position?: number;
  hide?: boolean;
  skip?: boolean;
  selected?: boolean;
  index?: FieldIndex;
  sid_type?: boolean;
  category?: string;
  form_default?: FieldOption[];
  selector?: FieldOption[];
  virtual?: VirtualBlock;
}

/** What a writer may hand in: the defaults of `normalizeFields` fill the rest. */
export type FieldInput = Omit<FieldObject, "name" | "type" | "virtual"> & {
  name?: string;
  type?: FieldType;
  virtual?: Omit<VirtualBlock, "match"> & { match?: VirtualMatch };
};

const KNOWN = new Set([
  "id",
  "name",
  "type",
  "form_type",
  "position",
  "hide",
  "skip",
  "selected",
  "index",
  "sid_type",
  "category",
  "form_default",
  "selector",
  "virtual",
]);

interface Issue {
  path: string;
  why: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const oneOf = <T extends string>(list: readonly T[], v: unknown): v is T => typeof v === "string" && (list as readonly string[]).includes(v);
const listText = (list: readonly string[]) => list.map((x) => `"${x}"`).join(", ");

function readOptions(raw: unknown, path: string, issues: Issue[]): FieldOption[] | undefined {
  if (!Array.isArray(raw)) {
    issues.push({ path, why: "must be an array of {name, value}" });
    return undefined;
  }
  if (raw.length > MAX_OPTIONS) issues.push({ path, why: `at most ${MAX_OPTIONS} options` });
  const out: FieldOption[] = [];
  raw.slice(0, MAX_OPTIONS).forEach((o, i) => {
    const p = `${path}.${i}`;
    if (!isObject(o)) return issues.push({ path: p, why: "must be an object {name, value}" });
    for (const k of Object.keys(o)) if (k !== "name" && k !== "value") issues.push({ path: `${p}.${k}`, why: "unknown member (an option has name and value)" });
    const ok = typeof o.name === "string" && o.name.length > 0 && o.name.length <= 128;
    if (!ok) issues.push({ path: `${p}.name`, why: "must be a string of 1-128 characters" });
    const v = o.value;
    const valueOk = (typeof v === "string" && v.length <= 256) || (typeof v === "number" && Number.isFinite(v));
    if (!valueOk) issues.push({ path: `${p}.value`, why: "must be a string (at most 256 characters) or a finite number" });
    if (ok && valueOk) out.push({ name: o.name as string, value: v as string | number });
  });
  return out;
}

function readVirtual(raw: unknown, path: string, issues: Issue[]): VirtualBlock | undefined {
  if (!isObject(raw)) {
    issues.push({ path, why: "must be an object {kind, path, match}" });
    return undefined;
  }
  for (const k of Object.keys(raw)) if (k !== "kind" && k !== "path" && k !== "match") issues.push({ path: `${path}.${k}`, why: "unknown member (kind, path, match)" });
  const before = issues.length;
  if (!oneOf(VIRTUAL_KINDS, raw.kind)) issues.push({ path: `${path}.kind`, why: `must be ${listText(VIRTUAL_KINDS)}` });
  const p = raw.path;
  if (typeof p !== "string" || p.length > 256 || !VIRTUAL_PATH_RE.test(p)) {
    issues.push({ path: `${path}.path`, why: "must be a dotted path of segments made of letters, digits, _ and - (at most 256 characters)" });
  }
  if (raw.match !== undefined && !oneOf(VIRTUAL_MATCHES, raw.match)) issues.push({ path: `${path}.match`, why: `must be one of ${listText(VIRTUAL_MATCHES)}` });
  if (issues.length > before) return undefined;
  return { kind: "data_extra_json", path: p as string, match: oneOf(VIRTUAL_MATCHES, raw.match) ? raw.match : "like" };
}

const flag = (o: Record<string, unknown>, key: string, path: string, issues: Issue[]): boolean | undefined => {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v === "boolean") return v;
  issues.push({ path: `${path}.${key}`, why: "must be a boolean" });
  return undefined;
};

/** Reads one field object, recording every problem; returns what could be kept (undefined without a usable id). */
function readField(raw: unknown, path: string, issues: Issue[]): FieldObject | undefined {
  if (!isObject(raw)) {
    issues.push({ path, why: "must be a field object" });
    return undefined;
  }
  for (const k of Object.keys(raw)) if (!KNOWN.has(k)) issues.push({ path: `${path}.${k}`, why: "unknown member of a field object" });
  const id = raw.id;
  if (typeof id !== "string" || !ID_RE.test(id)) {
    issues.push({ path: `${path}.id`, why: "must be a string of 1-128 characters without whitespace, quotes or backslashes" });
    return undefined;
  }
  const f: FieldObject = { id, name: id, type: "string" };
  if (typeof raw.name === "string" && raw.name.length > 0 && raw.name.length <= 128) f.name = raw.name;
  else issues.push({ path: `${path}.name`, why: "required: a label of 1-128 characters" });
  if (oneOf(FIELD_TYPES, raw.type)) f.type = raw.type;
  else issues.push({ path: `${path}.type`, why: `required: one of ${listText(FIELD_TYPES)}` });
  if (raw.form_type !== undefined) {
    if (oneOf(FORM_TYPES, raw.form_type)) f.form_type = raw.form_type;
    else issues.push({ path: `${path}.form_type`, why: `must be one of ${listText(FORM_TYPES)}` });
  }
  if (raw.position !== undefined) {
    if (typeof raw.position === "number" && Number.isFinite(raw.position)) f.position = raw.position;
    else issues.push({ path: `${path}.position`, why: "must be a finite number" });
  }
  for (const key of ["hide", "skip", "selected", "sid_type"] as const) {
    const v = flag(raw, key, path, issues);
    if (v !== undefined) f[key] = v;
  }
  if (raw.index !== undefined) {
    if (oneOf(FIELD_INDEXES, raw.index)) f.index = raw.index;
    else issues.push({ path: `${path}.index`, why: `must be one of ${listText(FIELD_INDEXES)}` });
  }
  if (raw.category !== undefined) {
    if (typeof raw.category === "string" && raw.category.length <= 64) f.category = raw.category;
    else issues.push({ path: `${path}.category`, why: "must be a string of at most 64 characters" });
  }
  if (raw.form_default !== undefined) {
    const o = readOptions(raw.form_default, `${path}.form_default`, issues);
    if (o) f.form_default = o;
  }
  if (raw.selector !== undefined) {
    const o = readOptions(raw.selector, `${path}.selector`, issues);
    if (o) f.selector = o;
  }
  if (f.form_type === "select" && !f.selector?.length) issues.push({ path: `${path}.selector`, why: 'required (non-empty) when form_type is "select"' });
  if (raw.virtual !== undefined) {
    const v = readVirtual(raw.virtual, `${path}.virtual`, issues);
    if (v) f.virtual = v;
  }
  return f;
}

function readFields(raw: unknown, path: string, issues: Issue[]): FieldObject[] {
  if (!Array.isArray(raw)) {
    issues.push({ path, why: "must be an array of field objects" });
    return [];
  }
  if (raw.length > MAX_FIELDS) issues.push({ path, why: `at most ${MAX_FIELDS} fields` });
  const out: FieldObject[] = [];
  const seen = new Set<string>();
  raw.slice(0, MAX_FIELDS).forEach((r, i) => {
    const f = readField(r, `${path}.${i}`, issues);
    if (!f) return;
    if (seen.has(f.id)) return issues.push({ path: `${path}.${i}.id`, why: `duplicate field id "${f.id}"` });
    seen.add(f.id);
    out.push(f);
  });
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
    if (f.form_type === "select" && !f.selector?.length) throw invalidField(`${path}.${i}.selector`, 'required (non-empty) when form_type is "select"');
    if (seen.has(f.id)) throw invalidField(`${path}.${i}.id`, `duplicate field id "${f.id}"`);
    seen.add(f.id);
  });
  return readFields(raw, path, []);
}

/** Tolerant read of stored or generated fields: defaults filled, invalid members and duplicate ids dropped. */
export function normalizeFields(raw: unknown): FieldObject[] {
  return readFields(Array.isArray(raw) ? raw : [], "fields_mapping", []);
}

/**
 * Alternative filter keys of spec doc 1 ("SIP field ids"): `session_id` for `call_id`, `caller` and
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
export function findField(mapping: { readonly fieldsMapping: readonly FieldObject[] } | readonly FieldObject[], fieldId: string): FieldObject | undefined {
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
 * Comparison form of a field list (doc 2: `fields_mapping` is rewritten "only when the JSON differs
 * semantically"): normalized, so defaults equal their explicit form; ordered by id, because the order
 * shown comes from `position`, not from the array.
 */
export function canonicalFields(raw: unknown): string {
  return stableJson(normalizeFields(raw).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
}
