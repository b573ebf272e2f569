import type { AnyElysia } from "elysia";
import type { AuthService, CoordinatorConfig } from "../../auth/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { agentsRoutes } from "../agents/index.ts";
import { aliasesRoutes } from "../aliases/index.ts";
import { dashboardsRoutes } from "../dashboards/index.ts";
import { hepsubsRoutes } from "../hepsubs/index.ts";
import { mappingsRoutes } from "../mappings/index.ts";
import { meRoutes } from "../me/index.ts";
import { openapiRoutes } from "../openapi/index.ts";
import { tokensRoutes } from "../tokens/index.ts";
import { usersRoutes } from "../users/index.ts";
import { authGuard, v4Base } from "./guard.ts";
import { oauth2Routes } from "./oauth2-routes.ts";
import { authRoutes } from "./routes.ts";

export interface CorePluginDeps {
  config: CoordinatorConfig;
  settings: SettingsStore;
  auth: AuthService;
  /** What this coordinator mounts beyond the core (GET /me `features`); default from the config, search off. */
  features?: { live_stream: boolean; search: boolean; games: boolean };
}

/**
 * The v4 plugins of the coordinator core, guard first. main.ts passes them (followed by any other
 * feature plugins) as `v4` to `createCoordinatorApp`.
 */
export function coordinatorCorePlugins({ config, settings, auth, features }: CorePluginDeps): AnyElysia[] {
  const base = v4Base(config);
  return [
    authGuard(auth, config),
    authRoutes(auth, config),
    oauth2Routes(auth),
    meRoutes(
      settings,
      auth,
      base,
      features ?? { live_stream: config.hep_stream.enable, search: false, games: config.widgets.control.games },
      config.auth.require_first_password_change,
    ),
    usersRoutes(settings),
    dashboardsRoutes(settings),
    tokensRoutes(settings, auth, config.api_settings),
    aliasesRoutes(settings),
    hepsubsRoutes(settings),
    mappingsRoutes(settings),
    agentsRoutes(settings),
    openapiRoutes({ base, tokenHeader: config.api_settings.auth_token_header }),
  ];
}
