import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { HEPSUB_SORTS, type HepSub, type SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import {
  IdResponse,
  anyObject,
  dataResponse,
  errors,
  idBody,
  idString,
  iso,
  listBody,
  jsonObject,
  listResponse,
  pageInput,
  pageQuery,
} from "../openapi/schemas.ts";

const HepSubSchema = t.Object({
  id: t.String(),
  hepid: t.Integer(),
  profile: t.String(),
  hep_alias: t.String(),
  version: t.Integer(),
  mapping: t.Record(t.String(), t.Unknown()),
  created_at: t.String(),
  updated_at: t.String(),
});

const hepSubJson = (s: HepSub) => ({
  id: s.id,
  hepid: s.hepid,
  profile: s.profile,
  hep_alias: s.hepAlias,
  version: s.version,
  mapping: s.mapping,
  created_at: iso(s.createdAt),
  updated_at: iso(s.updatedAt),
});

const Upsert = t.Object({
  hepid: t.Integer({ minimum: 0, maximum: 65535, description: "HEP protocol type" }),
  profile: t.String({ minLength: 1, maxLength: 128 }),
  hep_alias: t.Optional(t.String({ maxLength: 128 })),
  version: t.Optional(t.Integer({ minimum: 1 })),
  mapping: t.Optional(anyObject("the subscription's mapping document")),
});

const toInput = (b: typeof Upsert.static) => ({
  hepid: b.hepid,
  profile: b.profile,
  hepAlias: b.hep_alias,
  version: b.version,
  mapping: b.mapping === undefined ? undefined : jsonObject(b.mapping, "mapping"),
});
const notFound = () => new AppError("NOT_FOUND", "no such HEP subscription");

/** Hepsub tag: per (hepid, profile) subscription documents. Reading for every user; changes admin only. */
export function hepsubsRoutes(settings: SettingsStore) {
  const params = t.Object({ hepsubId: idString() });
  return new Elysia({ name: "svc-hepsubs" })
    .use(authContext)
    .get(
      "/hepsubs",
      ({ query }) =>
        listBody(
          settings.hepSubs.list(
            { hepid: query.hepid, profile: query.profile, hepAlias: query.hep_alias },
            pageInput(query),
          ),
          hepSubJson,
        ),
      {
        query: t.Object({
          ...pageQuery(HEPSUB_SORTS),
          hepid: t.Optional(t.Integer({ minimum: 0, maximum: 65535 })),
          profile: t.Optional(t.String({ maxLength: 128 })),
          hep_alias: t.Optional(t.String({ maxLength: 128 })),
        }),
        response: { 200: listResponse(HepSubSchema), ...errors(400, 401) },
        detail: { tags: ["Hepsub"], summary: "List HEP subscriptions (sort: hepid, profile, hep_alias, created_at)" },
      },
    )
    .post(
      "/hepsubs",
      ({ body, set }) => {
        const s = settings.hepSubs.create(toInput(body));
        set.status = 201;
        return idBody(s.id, "HEP subscription created");
      },
      {
        admin: true,
        body: Upsert,
        response: { 201: IdResponse, ...errors(400, 401, 403, 409) },
        detail: { tags: ["Hepsub"], summary: "Create a HEP subscription (admin)" },
      },
    )
    .get(
      "/hepsubs/:hepsubId",
      ({ params }) => {
        const s = settings.hepSubs.get(params.hepsubId);
        if (!s) throw notFound();
        return { data: hepSubJson(s) };
      },
      {
        params,
        response: { 200: dataResponse(HepSubSchema), ...errors(401, 404) },
        detail: { tags: ["Hepsub"], summary: "Read a HEP subscription" },
      },
    )
    .put(
      "/hepsubs/:hepsubId",
      ({ params, body }) => {
        if (!settings.hepSubs.update(params.hepsubId, toInput(body))) throw notFound();
        return idBody(params.hepsubId, "HEP subscription updated");
      },
      {
        admin: true,
        params,
        body: Upsert,
        response: { 200: IdResponse, ...errors(400, 401, 403, 404, 409) },
        detail: { tags: ["Hepsub"], summary: "Replace a HEP subscription (admin)" },
      },
    )
    .delete(
      "/hepsubs/:hepsubId",
      ({ params, set }) => {
        if (!settings.hepSubs.delete(params.hepsubId)) throw notFound();
        set.status = 204;
      },
      {
        admin: true,
        params,
        response: { 204: t.Void(), ...errors(401, 403, 404) },
        detail: { tags: ["Hepsub"], summary: "Delete a HEP subscription (admin)" },
      },
    );
}
