import { loadConfig, maskSecrets } from "../config/index.ts";
import { formatHelp, parseArgs, type FlagSpec } from "./args.ts";

/**
 * `svc show-config`: the effective configuration with secrets masked on standard output (valid
 * JSON, for jq and for a config file). Keys of the superseded file model the file still has are
 * listed on standard error as ignored (docs/OPERATIONS.md "Keys of the superseded file model").
 */
export function runShowConfig(argv: string[], flags: FlagSpec[]): number {
  const parsed = parseArgs(argv, flags);
  if (parsed.flags.help) {
    console.log(
      formatHelp(
        "svc show-config [--config-path <file>]",
        "Print the effective configuration with secrets masked.",
        flags,
      ),
    );
    return 0;
  }
  const { config, ignored } = loadConfig({ path: parsed.flags["config-path"] as string | undefined });
  for (const i of ignored) console.error(`ignored: ${i.key} ${i.reason}`);
  console.log(JSON.stringify(maskSecrets(config), null, 2));
  return 0;
}
