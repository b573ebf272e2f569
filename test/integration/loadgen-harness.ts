/** Shared pieces of the loadgen tests: options over the defaults, and a loadgen UAS on an ephemeral UDP port. */
import { DEFAULT_OPTIONS, Engine, type LoadgenOptions } from "../../src/loadgen/index.ts";

export const opts = (o: Partial<LoadgenOptions>): LoadgenOptions => ({ ...DEFAULT_OPTIONS, listeners: [], ...o });

/** A started `uas` engine on 127.0.0.1:0 (stop it in `finally`). */
export async function startUas(o: Partial<LoadgenOptions> = {}): Promise<Engine> {
  const uas = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0, ...o }), mode: "management" });
  await uas.start();
  return uas;
}
