import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { DASHBOARD_SORTS, type SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import {
  IdResponse,
  dataResponse,
  errors,
  idBody,
  idString,
  listBody,
  listResponse,
  pageInput,
  pageQuery,
} from "../openapi/schemas.ts";
import { DashboardSchema, DashboardUpsert, dashboardJson, toDraft } from "./model.ts";

const notFound = () => new AppError("NOT_FOUND", "no such dashboard");

/**
 * Dashboards tag: each user's own dashboards (another user's id is a 404). An empty list is seeded
 * with the defaults of docs/API.md "Default dashboards" on first read.
 */
export function dashboardsRoutes(settings: SettingsStore) {
  const params = t.Object({ dashboardId: idString() });
  return new Elysia({ name: "svc-dashboards" })
    .use(authContext)
    .get(
      "/dashboards",
      ({ auth, query }) => listBody(settings.dashboards.list(auth.username, pageInput(query)), dashboardJson),
      {
        query: t.Object(pageQuery(DASHBOARD_SORTS)),
        response: { 200: listResponse(DashboardSchema), ...errors(400, 401) },
        detail: {
          tags: ["Dashboards"],
          summary: "The caller's dashboards (sort: position, name, created_at, updated_at)",
        },
      },
    )
    .post(
      "/dashboards",
      ({ auth, body, set }) => {
        const d = settings.dashboards.create(auth.username, toDraft(body, settings.dashboards.count(auth.username)));
        set.status = 201;
        return idBody(d.id, "dashboard created");
      },
      {
        body: DashboardUpsert,
        response: { 201: IdResponse, ...errors(400, 401) },
        detail: { tags: ["Dashboards"], summary: "Create a dashboard (position defaults to the end of the list)" },
      },
    )
    .get(
      "/dashboards/:dashboardId",
      ({ auth, params }) => {
        const d = settings.dashboards.get(auth.username, params.dashboardId);
        if (!d) throw notFound();
        return { data: dashboardJson(d) };
      },
      {
        params,
        response: { 200: dataResponse(DashboardSchema), ...errors(401, 404) },
        detail: { tags: ["Dashboards"], summary: "Read a dashboard" },
      },
    )
    .put(
      "/dashboards/:dashboardId",
      ({ auth, params, body }) => {
        const cur = settings.dashboards.get(auth.username, params.dashboardId);
        if (!cur) throw notFound();
        settings.dashboards.update(auth.username, cur.id, toDraft(body, cur.position));
        return idBody(cur.id, "dashboard updated");
      },
      {
        params,
        body: DashboardUpsert,
        response: { 200: IdResponse, ...errors(400, 401, 404) },
        detail: { tags: ["Dashboards"], summary: "Replace a dashboard (rename, reorder, change widgets)" },
      },
    )
    .delete(
      "/dashboards/:dashboardId",
      ({ auth, params, set }) => {
        if (!settings.dashboards.delete(auth.username, params.dashboardId)) throw notFound();
        set.status = 204;
      },
      {
        params,
        response: { 204: t.Void(), ...errors(401, 404) },
        detail: { tags: ["Dashboards"], summary: "Delete a dashboard" },
      },
    );
}
