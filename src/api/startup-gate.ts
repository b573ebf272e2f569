import { Elysia, type AnyElysia } from "elysia";
import type { StartupState } from "../core/index.ts";

/**
 * A feature plugin that reads or writes the lake, answering 503 `STARTING` with Retry-After until
 * the lake has started (docs/ARCHITECTURE.md "Start-up"). The check runs before the handler, after
 * the auth guard: a caller without a credential still gets its 401 first.
 */
export function needsLake(startup: StartupState, what: string, plugin: AnyElysia): AnyElysia {
  return new Elysia().onBeforeHandle(() => startup.assertReady(what)).use(plugin);
}
