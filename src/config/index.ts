export { ConfigSchema, type Config } from "./schema.ts";
export { loadConfig, type LoadedConfig, type LoadOptions } from "./load.ts";
export { maskSecrets } from "./show.ts";
export { checkConfigEffects, configWarnings, refusedKeys, REFUSED_KEY_RULES } from "./effects.ts";
export { engineThreadCount, engineTuning, hepThreadCount, lakeConfig, type EngineTuning } from "./tuning.ts";
export { oauth2MissingKeys } from "./oauth2-migration.ts";
