import { Elysia, t } from "elysia";
import type { AuthService } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { dashboardJson, DashboardSchema } from "../dashboards/model.ts";
import { checkedByRoute, errors, isoOrNull, jsonObject } from "../openapi/schemas.ts";
import { profileFields, userJson } from "../users/model.ts";
import { SETTING_DATA_DOC } from "./model.ts";

export const ProfileSchema = t.Object({
  id: t.Union([t.String(), t.Null()]),
  ...profileFields,
  is_active: t.Boolean(),
  provider: t.String(),
  via: t.String(),
  avatar: t.Optional(t.String({ description: "present only when a single-sign-on photo is cached" })),
  features: t.Optional(
    t.Object(
      {
        live_stream: t.Boolean({ description: "coordinator.hep_stream.enable: /stream/hep exists (else it is a 404)" }),
        search: t.Boolean({ description: "this coordinator has a lake: call search, SQL and KPIs exist (else they are 404)" }),
        games: t.Boolean({ description: "coordinator.widgets.control.games: the game relays answer (else 503)" }),
      },
      { description: 'what this server offers, so the dashboard does not probe switched-off routes (docs/DASHBOARD.md "Features")' },
    ),
  ),
});

export const SettingSchema = t.Object({
  category: t.String(),
  param: t.String(),
  data: t.Record(t.String(), t.Unknown()),
  is_default: t.Boolean(),
  updated_at: t.Union([t.String(), t.Null()]),
});

const slug = (what: string) => t.String({ pattern: "^[a-z][a-z0-9_-]{0,63}$", description: what });

/** Profile, avatar, per-user settings and the dashboard reset (spec doc 1, Users and profile). */
export function meRoutes(
  settings: SettingsStore,
  service: AuthService,
  apiBase: string,
  features: { live_stream: boolean; search: boolean; games: boolean } = { live_stream: false, search: false, games: false },
) {
  return new Elysia({ name: "svc-me" })
    .use(authContext)
    .get(
      "/me",
      ({ auth }) => {
        const row = settings.users.getByUsername(auth.username);
        const base = row ? userJson(row) : { id: null, username: auth.username, email: "", first_name: "", last_name: "", user_group: "", is_active: true };
        return {
          data: {
            id: base.id,
            username: base.username,
            email: base.email,
            first_name: base.first_name,
            last_name: base.last_name,
            user_group: base.user_group,
            is_active: base.is_active,
            is_admin: auth.isAdmin,
            provider: auth.provider,
            via: auth.via,
            ...(service.avatars.get(auth.username) ? { avatar: `${apiBase}/me/avatar` } : {}),
            features,
          },
        };
      },
      {
        response: { 200: t.Object({ data: ProfileSchema }), ...errors(401) },
        detail: { tags: ["Users"], summary: "The caller's profile (is_admin is the effective flag of this session)" },
      },
    )
    .get(
      "/me/avatar",
      ({ auth, set }) => {
        const a = service.avatars.get(auth.username);
        if (!a) throw new AppError("NOT_FOUND", "no profile photo cached for this user");
        set.headers["content-type"] = a.contentType;
        set.headers["cache-control"] = "private, max-age=3600";
        return new Response(a.bytes);
      },
      { detail: { tags: ["Users"], summary: "Cached single-sign-on photo (404 when none)" } },
    )
    .get(
      "/me/settings",
      ({ auth }) => ({
        data: {
          items: settings.userSettings.list(auth.username).map((s) => ({
            category: s.category,
            param: s.param,
            data: s.data,
            is_default: s.isDefault,
            updated_at: isoOrNull(s.updatedAt),
          })),
        },
        meta: {},
      }),
      {
        response: { 200: t.Object({ data: t.Object({ items: t.Array(SettingSchema) }), meta: t.Object({}) }), ...errors(401) },
        detail: {
          tags: ["Settings"],
          summary: "Per-user settings; transaction.range, export.transaction and search.saved are listed with their defaults until saved",
        },
      },
    )
    .put(
      "/me/settings/:category",
      ({ auth, params, body }) => {
        const s = settings.userSettings.upsert(auth.username, params.category, body.param, jsonObject(body.data, "data"));
        // IdResponse (spec doc 1), with what was stored: out-of-range members were replaced by defaults.
        return { data: { id: s.id!, category: s.category, param: s.param, data: s.data }, message: "setting saved" };
      },
      {
        params: t.Object({ category: slug("setting category, e.g. transaction or export") }),
        body: t.Object({
          param: slug("parameter within the category, e.g. range"),
          data: checkedByRoute(
            "JSON object: transaction.range members out of range keep their defaults; export.transaction and search.saved are checked and a wrong member is named (400)",
            SETTING_DATA_DOC,
          ),
        }),
        response: {
          200: t.Object(
            {
              data: t.Object({
                id: t.String({ description: "the setting's id (the same on every save of this category and param)" }),
                category: t.String(),
                param: t.String(),
                data: t.Record(t.String(), t.Unknown(), { description: "as stored: transaction.range members out of range replaced by their defaults" }),
              }),
              message: t.String(),
            },
            { description: "IdResponse (data.id, message) plus the stored setting" },
          ),
          ...errors(400, 401),
        },
        detail: { tags: ["Settings"], summary: "Save one setting of a category" },
      },
    )
    .delete(
      "/me/settings/:category",
      ({ auth, params, query, set }) => {
        if (settings.userSettings.delete(auth.username, params.category, query.param) === 0) {
          throw new AppError("NOT_FOUND", `no stored setting in category ${params.category}`);
        }
        set.status = 204;
      },
      {
        params: t.Object({ category: slug("setting category") }),
        query: t.Object({ param: t.Optional(slug("only this parameter")) }),
        response: { 204: t.Void(), ...errors(401, 404) },
        detail: { tags: ["Settings"], summary: "Delete the stored settings of a category (back to defaults)" },
      },
    )
    .post("/me/dashboards/reset", ({ auth }) => ({ message: "dashboards reset to the defaults", data: { items: settings.dashboards.reset(auth.username).map(dashboardJson) } }), {
      response: { 200: t.Object({ message: t.String(), data: t.Object({ items: t.Array(DashboardSchema) }) }), ...errors(401) },
      detail: { tags: ["Dashboards"], summary: "Replace the caller's dashboards by the defaults" },
    });
}
