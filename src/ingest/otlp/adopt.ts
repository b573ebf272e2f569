import { errorMessage, type Logger, type Module, type TableDef } from "../../core/index.ts";
import { otlpTableDefs } from "./tables.ts";

interface AdoptSink {
  defineTable(def: TableDef): Promise<void>;
  storedTable(schema: string, name: string): Promise<unknown>;
}

/**
 * With the OTLP receiver off, the OTLP tables an earlier run stored stay searchable (docs/API.md "Search form request"
 * rule 5; docs/OTLP.md "Searching"): they are defined at start when the catalog has them.
 */
export function adoptOtlpTables(sink: AdoptSink, logger: Logger): Module {
  return {
    name: "otlp-tables",
    async start() {
      for (const def of otlpTableDefs()) {
        if (!(await sink.storedTable(def.schema, def.name))) continue;
        try {
          await sink.defineTable(def);
        } catch (e) {
          logger.warn("stored OTLP table not adopted", { table: def.name, error: errorMessage(e) });
        }
      }
    },
    async stop() {},
  };
}
