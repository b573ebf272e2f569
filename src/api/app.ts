import { Elysia, type AnyElysia } from "elysia";
import type { Config } from "../config/index.ts";
import type { Logger, MetricsRegistry } from "../core/index.ts";
import { errorHandler } from "./errors.ts";
import { healthRoute, type HealthReport } from "./health.ts";
import { objectBodies } from "./json-body.ts";

export interface CoordinatorDeps {
  config: Config;
  logger: Logger;
  metrics: MetricsRegistry;
  /** Feature plugins mounted under `{api_prefix}/api/v4`, in order. */
  v4?: ReadonlyArray<AnyElysia>;
  /** Legacy plugins mounted under `{api_prefix}/api/v3` (the v3 login, docs/AUTH.md). */
  v3?: ReadonlyArray<AnyElysia>;
  /** Plugins mounted at the root (static UI, share downloads). */
  root?: ReadonlyArray<AnyElysia>;
  /** What `/health` reports (health.ts); without it `/health` always passes. */
  health?: () => HealthReport;
}

/**
 * The coordinator HTTP app. `/metrics` and `/health` are at the root (Prometheus convention); the
 * versioned API lives under `{api_prefix}/api/v4`.
 */
export function createCoordinatorApp(deps: CoordinatorDeps) {
  const prefix = `${deps.config.coordinator.http_server.api_prefix.replace(/\/+$/, "")}/api/v4`;
  const app = new Elysia();
  app
    .use(errorHandler(deps.logger, app))
    .use(objectBodies(app))
    .get("/metrics", async ({ set }) => {
      set.headers["content-type"] = "text/plain; version=0.0.4; charset=utf-8";
      return await deps.metrics.renderFresh();
    })
    .use(healthRoute(deps.health));
  const v4 = new Elysia({ prefix });
  for (const p of deps.v4 ?? []) v4.use(p);
  app.use(v4);
  if (deps.v3?.length) {
    const v3 = new Elysia({ prefix: prefix.replace(/\/api\/v4$/, "/api/v3") });
    for (const p of deps.v3) v3.use(p);
    app.use(v3);
  }
  for (const p of deps.root ?? []) app.use(p);
  return app;
}
