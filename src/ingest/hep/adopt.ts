import type { Logger, Module } from "../../core/index.ts";
import { adoptStoredDefs, type AdoptSink } from "../stored-tables.ts";
import { seededHepTables } from "./tables.ts";

/**
 * With HEP ingest off (`ingest.hep.enable` false) a lake still searches the HEP tables its catalog
 * has: those an earlier run stored, and on a shared PostgreSQL catalog those the capture nodes
 * write (a coordinator reading the lake; docs/ARCHITECTURE.md "Coordinator over several nodes").
 * Without this the lake has no HEP table and every SIP search of it answers nothing.
 */
export function adoptHepTables(sink: AdoptSink, logger: Logger): Module {
  return adoptStoredDefs("hep-tables", "HEP", seededHepTables, sink, logger);
}
