export { UsageError, formatHelp, parseArgs, type FlagSpec, type Parsed, type ParsedFlags } from "./args.ts";
export { AGENT_HELP, runAgent } from "./agent.ts";
export { processIo, type CliIo } from "./io.ts";
export { SEARCH_HELP, runSearch } from "./search.ts";
export { RESET_HELP, dashboardUrl, firstRunBanner, runResetAdminPassword, writeFirstRunBanner } from "./first-run.ts";
export { PASSWORD_ENV, readSecretFromStdin } from "./secret-input.ts";
export { CATALOG_HELP, runCatalog } from "./catalog.ts";
export { SYSTEM_HELP, runSystem } from "./system.ts";
export { runShowConfig } from "./show-config.ts";
