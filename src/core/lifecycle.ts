import type { Logger } from "./log.ts";
import { errorMessage } from "./errors.ts";

/**
 * A module of the appliance (HOMER 11's service model): created from its own config slice, started
 * in dependency order, stopped in reverse. A disabled module is a no-op implementation.
 */
export interface Module {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const noopModule = (name: string): Module => ({ name, start: async () => {}, stop: async () => {} });

/** Starts modules in order; if one fails, stops those already started (reverse) and rethrows. */
export async function startAll(modules: readonly Module[], logger: Logger): Promise<void> {
  const started: Module[] = [];
  for (const m of modules) {
    try {
      await m.start();
      started.push(m);
    } catch (e) {
      logger.error("module failed to start", { module: m.name, error: e });
      await stopAll(started, logger);
      throw e;
    }
  }
}

/** Stops in reverse order; one failing stop never prevents the others (data must still flush). */
export async function stopAll(modules: readonly Module[], logger: Logger): Promise<boolean> {
  let clean = true;
  for (const m of [...modules].reverse()) {
    try {
      await m.stop();
      logger.debug("module stopped", { module: m.name });
    } catch (e) {
      clean = false;
      logger.error("module failed to stop", { module: m.name, error: errorMessage(e) });
    }
  }
  return clean;
}
