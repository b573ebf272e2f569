export * from "./errors.ts";
export * from "./result.ts";
export * from "./log.ts";
export * from "./metrics.ts";
export * from "./lifecycle.ts";
export * from "./net.ts";
export * from "./version.ts";
export * from "./table.ts";
