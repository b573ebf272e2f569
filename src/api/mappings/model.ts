import { t } from "elysia";
import {
  FIELD_INDEXES,
  FIELD_TYPES,
  FORM_TYPES,
  VIRTUAL_MATCHES,
  FieldsInputSchema,
  validateFields,
  type FieldObject,
  type MappingRow,
  type MappingUpsert,
} from "../../settings/index.ts";
import { anyObject, checkedByRoute, iso, jsonObject } from "../openapi/schemas.ts";

/**
 * Mapping rows and field objects as the API shows them (docs/API.md "Mapping rows", "Field object",
 * "Virtual block"). Field lists are checked by `validateFields` (the TypeBox schema of
 * src/settings/mapping-schema.ts, then the rules a schema cannot state: selector for select, unique
 * ids) rather than by Elysia, so its messages name the member (`fields_mapping.3.virtual.path: ...`).
 */
const OptionSchema = t.Object({ name: t.String(), value: t.Union([t.String(), t.Number()]) });

export const FieldSchema = t.Object({
  id: t.String({ description: "filter key, sent as filter.<id>" }),
  name: t.String({ description: "label" }),
  type: t.UnionEnum(FIELD_TYPES),
  form_type: t.Optional(t.UnionEnum(FORM_TYPES, { description: "input when absent; select needs selector" })),
  position: t.Optional(t.Number({ description: "order, lower first" })),
  hide: t.Optional(t.Boolean({ description: "hidden until enabled in widget settings" })),
  skip: t.Optional(t.Boolean({ description: "never shown" })),
  selected: t.Optional(t.Boolean({ description: "default-on hint" })),
  index: t.Optional(t.UnionEnum(FIELD_INDEXES)),
  sid_type: t.Optional(t.Boolean({ description: "the primary correlation field" })),
  category: t.Optional(t.String()),
  form_default: t.Optional(t.Array(OptionSchema, { description: "preset options of a multi-select" })),
  selector: t.Optional(t.Array(OptionSchema, { description: "options of a select" })),
  virtual: t.Optional(
    t.Object({
      kind: t.Literal("data_extra_json"),
      path: t.String({ description: "dotted JSON path under data_extra (letters, digits, _ and - per segment)" }),
      match: t.UnionEnum(VIRTUAL_MATCHES),
    }),
  ),
});

const json = t.Record(t.String(), t.Unknown());

export const MappingSchema = t.Object({
  id: t.String({ description: "the guid" }),
  guid: t.String(),
  hepid: t.Integer(),
  profile: t.String(),
  hep_alias: t.String(),
  fields_mapping: t.Array(FieldSchema),
  fields_settings: json,
  schema_mapping: json,
  mapping_settings: json,
  retention: t.Integer(),
  partition_step: t.Integer(),
  source: t.UnionEnum(["user", "seed", "sync"], {
    description:
      "seed: built-in, refreshed at start; sync: line-protocol table; user: owned by an administrator, never rewritten automatically",
  }),
  created_at: t.String(),
  updated_at: t.String(),
});

export const mappingJson = (m: MappingRow, fields: FieldObject[] = m.fieldsMapping) => ({
  id: m.guid,
  guid: m.guid,
  hepid: m.hepid,
  profile: m.profile,
  hep_alias: m.hepAlias,
  fields_mapping: fields,
  fields_settings: m.fieldsSettings,
  schema_mapping: m.schemaMapping,
  mapping_settings: m.mappingSettings,
  retention: m.retention,
  partition_step: m.partitionStep,
  source: m.source,
  created_at: iso(m.createdAt),
  updated_at: iso(m.updatedAt),
});

/** Profiles are path- and key-safe (`<hepid>_<profile>` keys user layouts): `call`, `main__cpu`. */
const PROFILE_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$";
export const hepidSchema = (description = "HEP protocol type (filter.proto_type)") =>
  t.Integer({ minimum: 0, maximum: 65535, description });
export const profileSchema = () =>
  t.String({ pattern: PROFILE_PATTERN, description: "event type (filter.event_type): letters, digits, _ . -; 1-128" });

/** What validateFields accepts, for the OpenAPI document: its TypeBox schema plus the select rule. */
const FIELDS_INPUT = {
  ...FieldsInputSchema,
  items: {
    ...FieldsInputSchema.items,
    // A select needs its options (checked after the schema by validateFields).
    if: { required: ["form_type"], properties: { form_type: { const: "select" } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
    then: { required: ["selector"], properties: { selector: { minItems: 1 } } },
  },
};

export const MappingUpsertBody = t.Object({
  hepid: hepidSchema(),
  profile: profileSchema(),
  hep_alias: t.Optional(t.String({ maxLength: 128, description: "display label" })),
  // Checked by validateFields (its messages name the member); published as the array it accepts.
  fields_mapping: checkedByRoute("array of field objects (ids unique within the list)", FIELDS_INPUT),
  fields_settings: t.Optional(anyObject("advanced metadata, usually {}")),
  schema_mapping: t.Optional(anyObject("advanced metadata, usually {}")),
  mapping_settings: t.Optional(anyObject("operator metadata; never overwritten by automatic sync")),
  retention: t.Optional(
    t.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: "operator value (0 = storage default); never overwritten by automatic sync",
    }),
  ),
  partition_step: t.Optional(
    t.Integer({
      minimum: 0,
      maximum: 1_000_000_000,
      description: "operator value (0 = default); never overwritten by automatic sync",
    }),
  ),
});

const optionalObject = (v: unknown, field: string) => (v === undefined ? undefined : jsonObject(v, field));

export const toUpsert = (b: typeof MappingUpsertBody.static): MappingUpsert => ({
  hepid: b.hepid,
  profile: b.profile,
  hepAlias: b.hep_alias,
  fieldsMapping: validateFields(b.fields_mapping, "fields_mapping"),
  fieldsSettings: optionalObject(b.fields_settings, "fields_settings"),
  schemaMapping: optionalObject(b.schema_mapping, "schema_mapping"),
  mappingSettings: optionalObject(b.mapping_settings, "mapping_settings"),
  retention: b.retention,
  partitionStep: b.partition_step,
});

/** `{data: {hepid, profile, hep_alias, items}, meta: {total}}` for the field-list operations. */
export const FieldListResponse = t.Object({
  data: t.Object({ hepid: t.Integer(), profile: t.String(), hep_alias: t.String(), items: t.Array(FieldSchema) }),
  meta: t.Object({ total: t.Integer() }),
});

export const fieldListBody = (m: MappingRow, items: FieldObject[]) => ({
  data: { hepid: m.hepid, profile: m.profile, hep_alias: m.hepAlias, items },
  meta: { total: items.length },
});

export const OverrideSchema = t.Object({
  id: t.String(),
  selected: t.Optional(t.Boolean()),
  position: t.Optional(t.Number()),
});
