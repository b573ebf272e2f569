/** SIP load generator (docs/LOADGEN.md): its own engine, run profiles and control API. */
export { LOADGEN_HELP, planFromArgv, runLoadgen } from "./cli.ts";
export { Engine, type EngineInit } from "./engine.ts";
export { startControlApi, type ControlApi } from "./control-api.ts";
export { DEFAULT_OPTIONS, parseCommandLine, type LoadgenOptions } from "./options.ts";
export { startPlan, type LoadgenIo, type RunningLoadgen } from "./run.ts";
export type { LoadgenStats } from "./stats.ts";
