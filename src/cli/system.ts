import { loadConfig } from "../config/index.ts";
import { configureLogging } from "../core/index.ts";
import { rebuildCatalog, type RebuildReport } from "../lake/index.ts";
import { formatHelp, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import { engineTuning, lakePaths, refuseRemote, refuseWithPostgres } from "./catalog.ts";
import type { CliIo } from "./io.ts";

/**
 * `svc system --rebuild-catalog [--rebuild-cleanup-orphans]` (docs/OPERATIONS.md
 * "Rebuilding the catalog"). Exit codes: 0 rebuilt, 2 usage, 1 refused or failed.
 */

const FLAGS: FlagSpec[] = [
  { name: "config-path", type: "string", description: "JSON configuration file (the one `svc serve` uses)" },
  {
    name: "rebuild-catalog",
    type: "boolean",
    description: "make a new catalog from the Parquet files under data_path (the appliance must be stopped)",
  },
  {
    name: "rebuild-cleanup-orphans",
    type: "boolean",
    description: "with --rebuild-catalog: delete the Parquet files that cannot be registered",
  },
  { name: "help", alias: "h", type: "boolean", description: "show help" },
];

export const SYSTEM_HELP = formatHelp(
  "svc system --config-path <file> --rebuild-catalog [--rebuild-cleanup-orphans]",
  [
    "Rebuild the lake catalog from the Parquet files alone: every file under data_path is registered",
    "in place with the statistics of its own footer; the old catalog is kept as",
    "<catalog>.corrupt.<UTC time>. Each file is judged on its own; symbolic links are not followed.",
    "Prints what was registered and what could not be.",
  ].join("\n"),
  FLAGS,
);

export function rebuildText(r: RebuildReport, dataPath: string): string {
  const out = [`rebuilt ${r.catalogPath} from the Parquet files under ${dataPath} (snapshot ${r.snapshotId})`];
  out.push(r.savedAs ? `previous catalog kept as ${r.savedAs}` : "there was no previous catalog");
  out.push(`previous catalog: ${r.oldCatalog}`);
  if (r.tables.length === 0) out.push("no table found");
  for (const t of r.tables) {
    const part = t.partitionBy ? `, partitioned by ${t.partitionBy}` : "";
    const sup =
      t.superseded > 0 ? `; ${t.superseded} superseded file(s) registered as retired (compaction sources)` : "";
    out.push(`table ${t.table}: ${t.files} file(s), ${t.rows} rows, ${t.columns} columns${part}${sup}`);
    if (t.spool) out.push(`  spool: ${t.spool}`);
  }
  if (r.orphans.length > 0) {
    const removed = r.orphans.filter((o) => o.removed).length;
    out.push(
      `not registered: ${r.orphans.length} file(s)${removed > 0 ? `, deleted (--rebuild-cleanup-orphans)` : ", left in place"}`,
    );
    for (const o of r.orphans) out.push(`  ${o.path}: ${o.reason}`);
    if (removed === 0)
      out.push(
        "delete them with --rebuild-cleanup-orphans; svc serve moves unreferenced ducklake-*.parquet files into <data_path>/_quarantine at start, it never deletes them",
      );
  }
  if (r.links.length > 0) {
    out.push(`symbolic links not followed: ${r.links.length} (never registered nor deleted)`);
    for (const l of r.links) out.push(`  ${l}`);
  }
  return out.join("\n") + "\n";
}

export async function runSystem(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) {
    await io.out(`${SYSTEM_HELP}\n`);
    return 0;
  }
  if (flags["rebuild-catalog"] !== true) {
    throw new UsageError(
      flags["rebuild-cleanup-orphans"]
        ? "--rebuild-cleanup-orphans needs --rebuild-catalog"
        : "svc system needs --rebuild-catalog (try: svc system --help)",
    );
  }
  const { config } = loadConfig({ path: flags["config-path"] as string | undefined });
  // The command's own output is the report; the log (stderr) carries warnings only.
  configureLogging({ level: "warn", format: config.log.format });
  refuseWithPostgres(config, "rebuild");
  refuseRemote(config, "svc system --rebuild-catalog");
  const paths = lakePaths(config);
  const report = await rebuildCatalog({
    ...paths,
    cleanupOrphans: flags["rebuild-cleanup-orphans"] === true,
    engine: engineTuning(config),
  });
  await io.out(rebuildText(report, paths.dataPath));
  return 0;
}
