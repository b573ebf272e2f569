import { invalidField } from "./db.ts";
import type { FieldObject } from "./mapping-fields.ts";
import { checkBody, OverrideListSchema } from "./mapping-schema.ts";

/**
 * Per-user layout of a mapping (table `user_mapping`, keyed `<hepid>_<profile>`). docs/API.md "Users and settings": a user
 * may override only `selected` and `position`; every other property always comes from the server
 * mapping, so a stale or hand-edited document can never change a field's type, id or virtual path.
 *
 * Stored document: `{ "fields": { "<field id>": { "selected": bool, "position": number } } }`.
 */
export interface UserFieldOverride {
  selected?: boolean;
  position?: number;
}

export type UserOverrides = Record<string, UserFieldOverride>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** Field ids are free text (`__proto__` included): keep them in an object without a prototype. */
const emptyOverrides = (): UserOverrides => Object.create(null) as UserOverrides;

function pick(raw: Record<string, unknown>): UserFieldOverride | undefined {
  const o: UserFieldOverride = {};
  if (typeof raw.selected === "boolean") o.selected = raw.selected;
  if (typeof raw.position === "number" && Number.isFinite(raw.position)) o.position = raw.position;
  return o.selected === undefined && o.position === undefined ? undefined : o;
}

/** Tolerant read of a stored document: anything but `selected`/`position` is ignored. */
export function readUserOverrides(doc: unknown): UserOverrides {
  const fields = isObject(doc) ? doc.fields : undefined;
  const out = emptyOverrides();
  if (!isObject(fields)) return out;
  for (const [id, raw] of Object.entries(fields)) {
    const o = isObject(raw) ? pick(raw) : undefined;
    if (o) out[id] = o;
  }
  return out;
}

export const userOverridesDoc = (o: UserOverrides): Record<string, unknown> => ({ fields: o });

/**
 * Strict read of `{fields: [{id, selected?, position?}]}` sent by a user (OverrideListSchema, then
 * the ids: each a field of the mapping, once). Any other member is a 400: the caller learns at once that e.g. `hide` cannot be
 * overridden rather than seeing it silently dropped.
 */
export function parseOverrideList(body: unknown, fields: readonly FieldObject[]): UserOverrides {
  checkBody(OverrideListSchema, body, "");
  const list = (body as typeof OverrideListSchema.static).fields;
  const known = new Set(fields.map((f) => f.id));
  const out = emptyOverrides();
  list.forEach((raw, i) => {
    if (!known.has(raw.id)) throw invalidField(`fields.${i}.id`, "must be the id of a field of this mapping");
    if (Object.hasOwn(out, raw.id)) throw invalidField(`fields.${i}.id`, `duplicate field id "${raw.id}"`);
    out[raw.id] = pick(raw) ?? {};
  });
  return out;
}

/** The server fields with the user's `selected`/`position` applied (nothing else can change). */
export function applyUserOverrides(fields: readonly FieldObject[], overrides: UserOverrides): FieldObject[] {
  return fields.map((f) => {
    const o = Object.hasOwn(overrides, f.id) ? overrides[f.id] : undefined;
    if (!o) return { ...f };
    return {
      ...f,
      ...(o.selected !== undefined ? { selected: o.selected } : {}),
      ...(o.position !== undefined ? { position: o.position } : {}),
    };
  });
}

/** Lower `position` first; fields without one keep their array order after the positioned ones. */
export function sortByPosition(fields: readonly FieldObject[]): FieldObject[] {
  return fields
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (a.f.position ?? Infinity) - (b.f.position ?? Infinity) || a.i - b.i)
    .map((x) => x.f);
}

/** Fields of the search widget: `skip` never shown, user layout applied, ordered; `hide` stays a flag for the widget settings. */
export function widgetFields(fields: readonly FieldObject[], overrides: UserOverrides): FieldObject[] {
  return sortByPosition(
    applyUserOverrides(
      fields.filter((f) => f.skip !== true),
      overrides,
    ),
  );
}
