export { ConfigSchema, type Config } from "./schema.ts";
export { loadConfig, type LoadedConfig, type LoadOptions } from "./load.ts";
export { maskSecrets, describeConfig } from "./show.ts";
