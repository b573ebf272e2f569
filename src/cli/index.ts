export { UsageError, formatHelp, parseArgs, type FlagSpec, type Parsed, type ParsedFlags } from "./args.ts";
export { AGENT_HELP, runAgent } from "./agent.ts";
export { processIo, type CliIo } from "./io.ts";
export { SEARCH_HELP, runSearch } from "./search.ts";
