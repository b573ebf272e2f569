import type { CoordinatorConfig } from "../../auth/index.ts";

/**
 * Whether static API tokens are accepted (docs/API.md "Authentication": only when
 * `coordinator.api_settings.enable_token_access` is true), and how to turn them on, in words the
 * tokens page shows as they are (docs/ADMIN.md, "API tokens").
 */
export const TOKEN_ACCESS_KEY = "coordinator.api_settings.enable_token_access";
export const TOKEN_ACCESS_ENV = "SVC_COORDINATOR_API_SETTINGS_ENABLE_TOKEN_ACCESS";

export interface TokenAccess {
  enabled: boolean;
  header: string;
  config_key: string;
  env: string;
  message: string;
}

export const TOKEN_ACCESS_DISABLED =
  `API token access is disabled on this server. To enable it set ${TOKEN_ACCESS_KEY} = true in the configuration file ` +
  `(/etc/svc/svc.json on an installed appliance, or the file given with --config-path) or set ${TOKEN_ACCESS_ENV}=true, then restart svc`;

export function tokenAccess(settings: CoordinatorConfig["api_settings"]): TokenAccess {
  return {
    enabled: settings.enable_token_access,
    header: settings.auth_token_header,
    config_key: TOKEN_ACCESS_KEY,
    env: TOKEN_ACCESS_ENV,
    message: settings.enable_token_access
      ? `API tokens are accepted in the ${settings.auth_token_header} header (${TOKEN_ACCESS_KEY} = true)`
      : TOKEN_ACCESS_DISABLED,
  };
}
