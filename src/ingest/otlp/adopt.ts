import type { Logger, Module } from "../../core/index.ts";
import { adoptStoredDefs, type AdoptSink } from "../stored-tables.ts";
import { otlpTableDefs } from "./tables.ts";

/**
 * With the OTLP receiver off, the OTLP tables an earlier run stored stay searchable (docs/API.md "Search form request"
 * rule 5; docs/OTLP.md "Searching"): they are defined at start when the catalog has them.
 */
export function adoptOtlpTables(sink: AdoptSink, logger: Logger): Module {
  return adoptStoredDefs("otlp-tables", "OTLP", otlpTableDefs, sink, logger);
}
