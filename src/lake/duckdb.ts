/**
 * The DuckDB driver, loaded on first use rather than with the code (docs/ARCHITECTURE.md
 * "Start-up"): @duckdb/node-api and its native addon take a large part of a start, and `svc serve`
 * answers its logins before the lake opens. Every file of src/lake imports the driver's types only
 * (`import type`); what creates an instance awaits `loadDuckDb()` first, and code that holds a
 * result (so the driver is loaded) reads its enums with `duckDbLoaded()`.
 */
import type * as DuckDb from "@duckdb/node-api";
import type * as Bindings from "@duckdb/node-bindings";

export type DuckDbApi = typeof DuckDb;
export type DuckDbBindings = typeof Bindings;

let before: (() => Promise<void> | void) | undefined;
let loading: Promise<DuckDbApi> | undefined;
let loaded: DuckDbApi | undefined;
let bindings: DuckDbBindings | undefined;

/**
 * Runs once before the driver loads: the executable maps its embedded libduckdb.so here, which the
 * addon links against (src/bin.ts, docs/PLATFORM.md "One executable with DuckDB inside").
 */
export function beforeDuckDbLoads(fn: () => Promise<void> | void): void {
  before = fn;
}

/** The driver, loaded by the first call (and `beforeDuckDbLoads` run first). */
export function loadDuckDb(): Promise<DuckDbApi> {
  loading ??= (async () => {
    await before?.();
    // Loading holds the thread for tens of milliseconds: requests already waiting go first
    // (docs/ARCHITECTURE.md "Start-up").
    await new Promise((r) => setTimeout(r, 0));
    loaded = await import("@duckdb/node-api");
    return loaded;
  })();
  // A failed load (no libduckdb.so) is retried by the next caller rather than remembered.
  loading.catch(() => (loading = undefined));
  return loading;
}

/**
 * The driver where it must already be loaded: only code handed a DuckDB result or connection
 * calls this. Falls back to a synchronous require (tests that open their own DuckDB).
 */
export function duckDbLoaded(): DuckDbApi {
  loaded ??= require("@duckdb/node-api") as DuckDbApi;
  return loaded;
}

/** The driver's C API (result-json.ts reads vectors with it), under the same condition. */
export function duckDbBindings(): DuckDbBindings {
  bindings ??= require("@duckdb/node-bindings") as DuckDbBindings;
  return bindings;
}
