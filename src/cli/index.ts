export { UsageError, formatHelp, parseArgs, type FlagSpec, type Parsed, type ParsedFlags } from "./args.ts";
