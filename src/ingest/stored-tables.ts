import { errorMessage, type Logger, type Module, type TableDef } from "../core/index.ts";

export interface AdoptSink {
  defineTable(def: TableDef): Promise<void>;
  storedTable(schema: string, name: string): Promise<unknown>;
}

/**
 * A module that, at start, defines those of `defs` the catalog already has: a receiver that is off
 * leaves its stored tables searchable (docs/OTLP.md "Searching") without creating empty ones. `label`
 * names the receiver in the warning of a table that cannot be adopted.
 */
export function adoptStoredDefs(
  name: string,
  label: string,
  defs: () => TableDef[],
  sink: AdoptSink,
  logger: Logger,
): Module {
  return {
    name,
    async start() {
      for (const def of defs()) {
        if (!(await sink.storedTable(def.schema, def.name))) continue;
        try {
          await sink.defineTable(def);
        } catch (e) {
          logger.warn(`stored ${label} table not adopted`, { table: def.name, error: errorMessage(e) });
        }
      }
    },
    async stop() {},
  };
}
