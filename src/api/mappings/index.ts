import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import {
  MAPPING_SORTS,
  applyUserOverrides,
  OverrideListSchema,
  parseOverrideList,
  sortByPosition,
  userMappingKey,
  widgetFields,
  type MappingRow,
  type SettingsStore,
} from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import {
  IdResponse,
  checkedByRoute,
  dataResponse,
  errors,
  idBody,
  idString,
  listBody,
  listResponse,
  pageInput,
  pageQuery,
} from "../openapi/schemas.ts";
import {
  FieldListResponse,
  MappingSchema,
  MappingUpsertBody,
  OverrideSchema,
  fieldListBody,
  hepidSchema,
  mappingJson,
  profileSchema,
  toUpsert,
} from "./model.ts";

/**
 * Mappings tag (docs/API.md "Mapping rows"): the protocol field mappings that drive
 * the search forms. Reading is open to every user; create, update and delete are admin only (403).
 * Built-in rows are seeded at start (settings/mapping-seed.ts); an administrator's change to a row's
 * fields, alias or settings makes it `source` = user, and the seed never rewrites it again.
 *
 * Per-user layout (`user_mapping`): `PUT /me/mappings/{hepid}_{profile}` with
 * `{fields: [{id, selected?, position?}]}` replaces the caller's overrides of that mapping; any other
 * member is a 400 (only `selected` and `position` may be overridden). `/mappings/merged` and
 * `/mappings/widget-fields` apply them; `/mappings/fields` never does.
 */
const notFound = () => new AppError("NOT_FOUND", "no such mapping");
const noMapping = (hepid: number, profile: string) =>
  new AppError("NOT_FOUND", `no mapping for hepid ${hepid} profile "${profile}"`);

const KeyQuery = t.Object({ hepid: hepidSchema(), profile: profileSchema() });

/** `<hepid>_<profile>` (spec: user_mapping key) → the mapping it names, or 404. */
function mappingOfKey(settings: SettingsStore, key: string): MappingRow {
  const m = /^(\d{1,5})_(.+)$/.exec(key);
  const row = m ? settings.mappings.mappingFor(Number(m[1]), m[2]!) : undefined;
  if (!row)
    throw new AppError("NOT_FOUND", `no mapping for key "${key}" (expected <hepid>_<profile> of an existing mapping)`);
  return row;
}

function mappingOf(settings: SettingsStore, hepid: number, profile: string): MappingRow {
  const row = settings.mappings.mappingFor(hepid, profile);
  if (!row) throw noMapping(hepid, profile);
  return row;
}

export function mappingsRoutes(settings: SettingsStore) {
  const params = t.Object({ mappingId: idString() });
  const keyParams = t.Object({
    mappingKey: t.String({ minLength: 3, maxLength: 140, description: "<hepid>_<profile>, e.g. 1_call" }),
  });
  return new Elysia({ name: "svc-mappings" })
    .use(authContext)
    .get(
      "/mappings",
      ({ query }) =>
        listBody(
          settings.mappings.list(
            { hepid: query.hepid, profile: query.profile, hepAlias: query.hep_alias },
            pageInput(query),
          ),
          (m) => mappingJson(m),
        ),
      {
        query: t.Object({
          ...pageQuery(MAPPING_SORTS),
          hepid: t.Optional(hepidSchema("only this protocol type")),
          profile: t.Optional(t.String({ maxLength: 128 })),
          hep_alias: t.Optional(t.String({ maxLength: 128 })),
        }),
        response: { 200: listResponse(MappingSchema), ...errors(400, 401) },
        detail: {
          tags: ["Mappings"],
          summary: "List mappings (sort: hepid, profile, hep_alias, created_at, updated_at; search: alias or profile)",
        },
      },
    )
    .post(
      "/mappings",
      ({ body, set }) => {
        const m = settings.mappings.create(toUpsert(body));
        set.status = 201;
        return idBody(m.guid, "mapping created");
      },
      {
        admin: true,
        body: MappingUpsertBody,
        response: { 201: IdResponse, ...errors(400, 401, 403, 409) },
        detail: { tags: ["Mappings"], summary: "Create a mapping (admin); 409 when hepid + profile exists" },
      },
    )
    .get(
      "/mappings/fields",
      ({ query }) => {
        const m = mappingOf(settings, query.hepid, query.profile);
        return fieldListBody(m, m.fieldsMapping);
      },
      {
        query: KeyQuery,
        response: { 200: FieldListResponse, ...errors(400, 401, 404) },
        detail: { tags: ["Mappings"], summary: "Field list of one mapping as stored (no user layout)" },
      },
    )
    .get(
      "/mappings/merged",
      ({ auth }) => {
        const layouts = settings.mappings.allUserOverrides(auth.username);
        const items = settings.mappings.all().map((m) => {
          const o = layouts.get(userMappingKey(m.hepid, m.profile));
          return mappingJson(m, o ? sortByPosition(applyUserOverrides(m.fieldsMapping, o)) : m.fieldsMapping);
        });
        return { data: { items }, meta: { total: items.length } };
      },
      {
        response: {
          200: t.Object({ data: t.Object({ items: t.Array(MappingSchema) }), meta: t.Object({ total: t.Integer() }) }),
          ...errors(401),
        },
        detail: {
          tags: ["Mappings"],
          summary:
            "Every mapping with the caller's layout (selected, position) applied; fields ordered by position when a layout exists",
        },
      },
    )
    .get(
      "/mappings/widget-fields",
      ({ auth, query }) => {
        const m = mappingOf(settings, query.hepid, query.profile);
        return fieldListBody(
          m,
          widgetFields(m.fieldsMapping, settings.mappings.userOverrides(auth.username, m.hepid, m.profile)),
        );
      },
      {
        query: KeyQuery,
        response: { 200: FieldListResponse, ...errors(400, 401, 404) },
        detail: {
          tags: ["Mappings"],
          summary:
            "Fields for the search widget: skip removed, caller's layout applied, ordered by position; hide kept as a flag",
        },
      },
    )
    .get(
      "/mappings/:mappingId",
      ({ params }) => {
        const m = settings.mappings.get(params.mappingId);
        if (!m) throw notFound();
        return { data: mappingJson(m) };
      },
      {
        params,
        response: { 200: dataResponse(MappingSchema), ...errors(401, 404) },
        detail: { tags: ["Mappings"], summary: "Read a mapping" },
      },
    )
    .put(
      "/mappings/:mappingId",
      ({ params, body }) => {
        if (!settings.mappings.get(params.mappingId)) throw notFound();
        settings.mappings.update(params.mappingId, toUpsert(body));
        return idBody(params.mappingId, "mapping updated");
      },
      {
        admin: true,
        params,
        body: MappingUpsertBody,
        response: { 200: IdResponse, ...errors(400, 401, 403, 404, 409) },
        detail: { tags: ["Mappings"], summary: "Update a mapping (admin); optional members left out keep their value" },
      },
    )
    .delete(
      "/mappings/:mappingId",
      ({ params, set }) => {
        if (!settings.mappings.delete(params.mappingId)) throw notFound();
        set.status = 204;
      },
      {
        admin: true,
        params,
        response: { 204: t.Void(), ...errors(401, 403, 404) },
        detail: {
          tags: ["Mappings"],
          summary: "Delete a mapping (admin); a built-in one comes back, as shipped, at the next start",
        },
      },
    )
    .get(
      "/me/mappings/:mappingKey",
      ({ auth, params }) => {
        const m = mappingOfKey(settings, params.mappingKey);
        const o = settings.mappings.userOverrides(auth.username, m.hepid, m.profile);
        return {
          data: { hepid: m.hepid, profile: m.profile, fields: Object.entries(o).map(([id, v]) => ({ id, ...v })) },
        };
      },
      {
        params: keyParams,
        response: {
          200: t.Object({
            data: t.Object({ hepid: t.Integer(), profile: t.String(), fields: t.Array(OverrideSchema) }),
          }),
          ...errors(401, 404),
        },
        detail: { tags: ["Mappings"], summary: "The caller's layout of one mapping (selected and position overrides)" },
      },
    )
    .put(
      "/me/mappings/:mappingKey",
      ({ auth, params, body }) => {
        const m = mappingOfKey(settings, params.mappingKey);
        settings.mappings.setUserOverrides(auth.username, m.hepid, m.profile, parseOverrideList(body, m.fieldsMapping));
        return idBody(userMappingKey(m.hepid, m.profile), "layout saved");
      },
      {
        params: keyParams,
        // Checked by parseOverrideList (its messages name the member); published as its schema.
        body: checkedByRoute("{fields: [{id, selected?, position?}]}; any other member is a 400", OverrideListSchema),
        response: { 200: IdResponse, ...errors(400, 401, 404) },
        detail: {
          tags: ["Mappings"],
          summary: "Replace the caller's layout of one mapping (only selected and position)",
        },
      },
    )
    .delete(
      "/me/mappings/:mappingKey",
      ({ auth, params, set }) => {
        const m = mappingOfKey(settings, params.mappingKey);
        settings.mappings.deleteUserMapping(auth.username, userMappingKey(m.hepid, m.profile));
        set.status = 204;
      },
      {
        params: keyParams,
        response: { 204: t.Void(), ...errors(401, 404) },
        detail: {
          tags: ["Mappings"],
          summary: "Drop the caller's layout of one mapping (back to the server defaults)",
        },
      },
    );
}
