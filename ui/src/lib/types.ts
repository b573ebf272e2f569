/**
 * Shapes of the v4 responses the dashboard reads: the server's own TypeBox schemas (src/api/*),
 * imported as types only (nothing of the server enters the bundle), so a change on one side is a
 * type error on the other instead of a silent mismatch.
 */
import type { Static } from "@sinclair/typebox";
import type {
  MethodInfo,
  ProvidersResponse,
  LoginResponse as LoginResponseSchema,
} from "../../../src/api/auth/routes.ts";
import type { DashboardSchema, WidgetSchema } from "../../../src/api/dashboards/model.ts";
import type { ProfileSchema, SettingSchema } from "../../../src/api/me/index.ts";

export type Me = Static<typeof ProfileSchema>;
export type LoginMethod = Static<typeof MethodInfo>;
export type Providers = Static<typeof ProvidersResponse>;
export type OAuthMethod = Providers["data"]["oauth2"][number];
export type LoginResponse = Static<typeof LoginResponseSchema>;
/** `config` is a free JSON object (the route checks it); the schema publishes it as unknown. */
export type Widget = Omit<Static<typeof WidgetSchema>, "config"> & { config?: Record<string, unknown> };
export type Dashboard = Omit<Static<typeof DashboardSchema>, "layout"> & { layout: Widget[] };
export type Setting = Static<typeof SettingSchema>;
