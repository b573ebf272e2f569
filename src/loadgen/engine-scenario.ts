/**
 * What switching the built-in scenario of a running engine means (docs/LOADGEN.md "Control API"):
 * a client engine (`uac`, `register`, `options`) starts its next calls with the new scenario, calls
 * under way finish as they began. A server engine answers with `uas`, the only built-in server
 * scenario, so the only switch it accepts is to `uas`. An engine running a `-sf` file keeps it.
 */
import { AppError } from "../core/index.ts";

export const BUILT_IN_SCENARIOS = ["uac", "uas", "register", "options"] as const;
export const CLIENT_SCENARIOS: ReadonlySet<string> = new Set(["uac", "register", "options"]);

/** Throws a BAD_REQUEST for an unknown name, a CONFLICT for a name this engine cannot switch to. */
export function checkScenarioSwitch(engine: { file: boolean; client: boolean; current: string }, name: string): void {
  if (!(BUILT_IN_SCENARIOS as readonly string[]).includes(name))
    throw new AppError(
      "BAD_REQUEST",
      `scenario must be a built-in name (${BUILT_IN_SCENARIOS.join(", ")}), got "${name}"`,
    );
  if (engine.file)
    throw new AppError(
      "CONFLICT",
      `the primary engine runs the scenario file ${engine.current}; only a built-in scenario can be switched`,
    );
  if (engine.client && !CLIENT_SCENARIOS.has(name))
    throw new AppError(
      "CONFLICT",
      `the primary engine is a client (${engine.current}); it can switch to uac, register or options, not ${name}`,
    );
  if (!engine.client && name !== "uas")
    throw new AppError(
      "CONFLICT",
      `the primary engine is a server and answers as uas; a client scenario (${name}) needs its own engine with remote_addr`,
    );
}
