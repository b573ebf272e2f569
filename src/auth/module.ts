import type { Logger, MetricsRegistry, Module } from "../core/index.ts";
import type { SettingsStore } from "../settings/index.ts";
import { bootstrapAdmin, wrapLegacyDigests } from "./bootstrap.ts";
import { checkConfiguredJwtSecret, loadJwtSecret } from "./jwt-secret.ts";
import { LdapPasswordProvider } from "./ldap/provider.ts";
import { prepareDummyHash } from "./passwords.ts";
import { oauth2Missing, type CoordinatorConfig } from "./providers.ts";
import { AuthService } from "./service.ts";
import { MemoryAuthStore } from "./state-store.ts";

/**
 * The auth module: starts after the settings database (it reads `users`). Start loads or creates
 * the JWT secret, loads the revoked sessions, rehashes bare SHA-256 digests with bcrypt, prepares
 * the dummy hash of unknown-user logins and, for `coordinator.auth.type` internal, bootstraps the
 * administrator.
 */
export function createAuthModule(
  config: CoordinatorConfig,
  store: SettingsStore,
  logger: Logger,
  metrics: MetricsRegistry,
): { service: AuthService; module: Module } {
  checkConfiguredJwtSecret(config.jwt.secret);
  const service = new AuthService(config, store, logger, metrics);
  service.registerProvider(new LdapPasswordProvider(config.ldap, logger.child({ component: "ldap" })));
  const module: Module = {
    name: "auth",
    async start() {
      service.useSecret(loadJwtSecret(config.jwt.secret, config.settings_db_path, logger));
      // The shared store first: a replica whose PostgreSQL cannot be reached does not serve logins
      // that the others would not see (docs/AUTH.md "Several coordinators").
      await service.shared.start();
      if (service.shared instanceof MemoryAuthStore) {
        if (service.shared.revokedLoaded > 0)
          logger.info("revoked sessions loaded", { sessions: service.shared.revokedLoaded });
      } else logger.info("auth shared store ready", { backend: service.shared.backend, store: service.shared.where });
      // Computed on Bun's worker pool while the port opens, not awaited: a bcrypt hash is about
      // 100 ms, a third of the start (docs/ARCHITECTURE.md "Start-up"). A login of an unknown user
      // in those first milliseconds waits for it (docs/ARCHITECTURE.md "Auth", Passwords).
      void prepareDummyHash();
      await wrapLegacyDigests(store.users, logger);
      const missing = oauth2Missing(config);
      if (config.oauth2_provider.enable && missing.length > 0) {
        logger.warn(
          `coordinator.oauth2_provider.enable is true but ${missing.join(", ")} is empty: OAuth 2.0 login stays disabled`,
        );
      }
      if (config.auth.type === "internal") {
        const boot = await bootstrapAdmin(store.users, config, logger);
        if (boot.generated) service.recordFirstRunAdmin(boot.generated);
      }
      if (config.ldap.enable && config.ldap.host.trim() === "") {
        logger.warn("coordinator.ldap.enable is true but coordinator.ldap.host is empty: LDAP login stays disabled");
      }
      if (config.ldap.enable && config.ldap.anonymous && !config.ldap.user_dn.includes("%s")) {
        logger.warn(
          "coordinator.ldap.anonymous is true but coordinator.ldap.user_dn has no %s: every LDAP login answers 503",
        );
      }
    },
    async stop() {
      await service.shared.stop();
    },
  };
  return { service, module };
}
