import { type Static, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { type Dashboard, type DashboardDraft, type Widget, WidgetPlacementSchema } from "../../settings/index.ts";
import { anyObject, iso, jsonObject } from "../openapi/schemas.ts";

/**
 * Dashboard document: `{name, position, layout: [{id, type, x, y, w, h, config}]}` — a 12-column
 * grid; `type` names the widget the UI renders (call-search, result-table, clock, game-…),
 * `config` is the widget's own JSON.
 */
export const WidgetSchema = t.Object({
  ...WidgetPlacementSchema.properties,
  config: t.Optional(anyObject("the widget's settings (default {})")),
});

export const DashboardUpsert = t.Object({
  name: t.String({ minLength: 1, maxLength: 128 }),
  position: t.Optional(
    t.Integer({ minimum: 0, maximum: 100000, description: "order in the dashboard list, lower first" }),
  ),
  layout: t.Array(WidgetSchema, { maxItems: 100, default: [] }),
});

export const DashboardSchema = t.Object({
  id: t.String(),
  name: t.String(),
  position: t.Integer(),
  layout: t.Array(WidgetSchema),
  created_at: t.String(),
  updated_at: t.String(),
});

export const dashboardJson = (d: Dashboard) => ({
  id: d.id,
  name: d.name,
  position: d.position,
  layout: d.layout,
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
});

/** Widget configs are free JSON: cap a dashboard's stored size so one user cannot bloat the database. */
const MAX_LAYOUT_BYTES = 256 * 1024;

type WidgetBody = Static<typeof WidgetSchema>;

export function toDraft(
  body: { name: string; position?: number | undefined; layout: WidgetBody[] },
  defaultPosition: number,
): DashboardDraft {
  const seen = new Set<string>();
  body.layout.forEach((w, i) => {
    if (seen.has(w.id))
      throw new AppError("VALIDATION", `layout[${i}].id: duplicate widget id "${w.id}"`, {
        details: { fields: [`layout[${i}].id`] },
      });
    seen.add(w.id);
  });
  if (JSON.stringify(body.layout).length > MAX_LAYOUT_BYTES) {
    throw new AppError("VALIDATION", `layout: larger than ${MAX_LAYOUT_BYTES} bytes`, {
      details: { fields: ["layout"] },
    });
  }
  const layout: Widget[] = body.layout.map((w, i) => ({
    ...w,
    config: w.config === undefined ? {} : jsonObject(w.config, `layout[${i}].config`),
  }));
  return { name: body.name, position: body.position ?? defaultPosition, layout };
}
