/** Replaced at build time by scripts/build.ts (`--define`); source runs report "dev". */
declare const SVC_VERSION: string | undefined;
declare const SVC_GIT_REVISION: string | undefined;

export const VERSION: string = typeof SVC_VERSION === "string" ? SVC_VERSION : "0.1.0-dev";
export const GIT_REVISION: string = typeof SVC_GIT_REVISION === "string" ? SVC_GIT_REVISION : "unknown";
