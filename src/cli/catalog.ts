import { join, resolve } from "node:path";
import { engineThreadCount, loadConfig, type Config } from "../config/index.ts";
import { AppError, configureLogging, createLogger } from "../core/index.ts";
import {
  backupCatalog,
  cacheDirOf,
  isRemoteDataPath,
  lakeStateDir,
  listCatalogBackups,
  listQuarantine,
  purgeQuarantine,
  restoreCatalog,
  type BackupEntry,
  type CatalogPaths,
} from "../lake/index.ts";
import { formatHelp, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import type { CliIo } from "./io.ts";

/**
 * `svc catalog backup|list|restore` and the lake paths both catalog commands share
 * (docs/OPERATIONS.md "Catalog backups"). Exit codes: 0 done, 2 usage, 1 refused or failed.
 */

const FLAGS: FlagSpec[] = [
  { name: "config-path", type: "string", description: "JSON configuration file (the one `svc serve` uses)" },
  {
    name: "from",
    type: "string",
    description: "restore: the backup (path, file name or its time part); default the newest",
  },
  { name: "purge", type: "boolean", description: "quarantine: delete the quarantined files" },
  { name: "help", alias: "h", type: "boolean", description: "show help" },
];

export const CATALOG_HELP = formatHelp(
  "svc catalog backup|list|restore|quarantine --config-path <file> [--from <backup>] [--purge]",
  [
    "Backups of the lake catalog (storage.lakehouse.catalog_path), named <catalog>.bak-<UTC time>.",
    "  backup   consistent copy while the appliance runs; keeps the newest backups_kept",
    "  list     backups, newest first: time, size, newest snapshot",
    "  restore  replaces the catalog by a backup (default the newest); the appliance must be",
    "           stopped; the replaced catalog is kept as <catalog>.pre-restore.<UTC time>;",
    "           a backup that is not exactly a catalog of ours is refused",
    "  quarantine  the files the start set aside in <data_path>/_quarantine instead of deleting",
    "           them; --purge deletes them",
  ].join("\n"),
  FLAGS,
);

/**
 * The file-based catalog tools do not apply to a catalog in PostgreSQL (docs/DUCKLAKE.md
 * "PostgreSQL catalog"): refused with what to use instead, nothing touched.
 */
export function refuseWithPostgres(config: Config, command: string): void {
  if (config.storage.lakehouse.catalog_type !== "postgres") return;
  const instead: Record<string, string> = {
    backup: "back it up with pg_dump (pg_dump -Fc -d <database> -f lake.dump) or PostgreSQL's continuous archiving",
    list: "its backups are PostgreSQL's: your pg_dump files or base backups",
    restore:
      "restore it with pg_restore (pg_restore --clean -d <database> lake.dump) or PostgreSQL's point-in-time recovery, with every svc writer stopped",
    rebuild: "restore it with pg_restore from a pg_dump or with PostgreSQL's point-in-time recovery",
  };
  throw new AppError(
    "VALIDATION",
    `svc ${command === "rebuild" ? "system --rebuild-catalog" : `catalog ${command}`} works on a SQLite catalog only; storage.lakehouse.catalog_type is postgres: ${instead[command]}`,
  );
}

/**
 * Catalog and data path of a configuration, with the logger the lake code writes to (stderr). A
 * remote data_path: the local read cache the catalog's paths point into (docs/STORAGE.md "Read cache").
 */
export function lakePaths(config: Config): CatalogPaths {
  const lh = config.storage.lakehouse;
  const catalogPath = resolve(lh.catalog_path);
  return {
    catalogPath,
    dataPath: isRemoteDataPath(lh.data_path) ? cacheDirOf(lakeStateDir(lh)) : resolve(lh.data_path),
    log: createLogger({ module: "catalog" }),
  };
}

/**
 * `svc catalog restore` and `svc system --rebuild-catalog` work on the Parquet files of a local
 * directory; with an object store they refuse, saying what to use instead (docs/STORAGE.md
 * "Catalog tools on a remote lake"). CONFIG_INVALID: exit code 2 and this one line.
 */
export function refuseRemote(config: Config, command: string): void {
  const dataPath = config.storage.lakehouse.data_path;
  if (!isRemoteDataPath(dataPath)) return;
  throw new AppError(
    "CONFIG_INVALID",
    `${command} works on a local data_path, and storage.lakehouse.data_path is ${dataPath}: keep older objects with the bucket's versioning (or Azure soft delete) and run it with data_path pointed at a local copy of the objects (docs/STORAGE.md "Catalog tools on a remote lake")`,
  );
}

/** DuckDB settings of the appliance's engine (storage.lakehouse.tuning) for offline tools. */
export function engineTuning(config: Config): { threads: number; memoryLimit: string; tempDirectory: string } {
  const t = config.storage.lakehouse.tuning;
  return {
    threads: engineThreadCount(config),
    memoryLimit: t.memory_limit,
    tempDirectory: t.temp_directory ? resolve(t.temp_directory) : join(lakeStateDir(config.storage.lakehouse), "tmp"),
  };
}

const KIB = 1024;
export function humanBytes(n: number): string {
  if (n < KIB) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / KIB;
  let u = 0;
  while (v >= KIB && u < units.length - 1) {
    v /= KIB;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

const when = (iso: string) => iso.replace("T", " ").replace(/Z$/, "");

function backupTable(list: BackupEntry[]): string {
  const rows = [
    ["TIME (UTC)", "SIZE", "SNAPSHOT", "FILE"],
    ...list.map((b) => [
      when(b.takenAt),
      humanBytes(b.sizeBytes),
      b.snapshotId === null ? `- (${b.problem})` : String(b.snapshotId),
      b.path,
    ]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join("  ")).join("\n") + "\n";
}

export async function runCatalog(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(argv, FLAGS, { allowPositionals: true });
  if (flags.help) {
    await io.out(`${CATALOG_HELP}\n`);
    return 0;
  }
  const [sub, ...extra] = positionals;
  if (sub === undefined)
    throw new UsageError("svc catalog needs a command: backup, list, restore or quarantine (try: svc catalog --help)");
  if (!["backup", "list", "restore", "quarantine"].includes(sub))
    throw new UsageError(`unknown catalog command "${sub}" (backup, list, restore or quarantine)`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (flags.from !== undefined && sub !== "restore") throw new UsageError("--from is for svc catalog restore");
  if (flags.purge !== undefined && sub !== "quarantine") throw new UsageError("--purge is for svc catalog quarantine");
  const { config } = loadConfig({ path: flags["config-path"] as string | undefined });
  // The command's own output is the report; the log (stderr) carries warnings only.
  configureLogging({ level: "warn", format: config.log.format });
  if (sub !== "quarantine") refuseWithPostgres(config, sub);
  const paths = lakePaths(config);
  if (sub === "backup") {
    const { backup, pruned } = backupCatalog(paths, config.storage.lakehouse.backups_kept);
    await io.out(
      `backup ${backup.path}: snapshot ${backup.snapshotId}, ${humanBytes(backup.sizeBytes)}\n${pruned.map((p) => `removed old backup ${p}\n`).join("")}`,
    );
    return 0;
  }
  if (sub === "quarantine") return quarantineCommand(paths, flags.purge === true, io);
  if (sub === "list") {
    const list = listCatalogBackups(paths.catalogPath);
    await io.out(
      list.length === 0 ? `no backups of ${paths.catalogPath} (svc catalog backup makes one)\n` : backupTable(list),
    );
    return 0;
  }
  refuseRemote(config, "svc catalog restore");
  const r = restoreCatalog(paths, flags.from as string | undefined);
  const lines = [`restored ${paths.catalogPath} from ${r.from}: snapshot ${r.snapshotId} (${r.snapshotTime})`];
  lines.push(r.savedAs ? `the replaced catalog is kept as ${r.savedAs}` : "there was no catalog to replace");
  await io.out(lines.join("\n") + "\n");
  if (r.unreferencedFiles > 0) {
    await io.err(
      `svc: warning: ${r.unreferencedFiles} data file(s) under ${paths.dataPath} are not in this backup (written after it); svc serve moves them into ${paths.dataPath}/_quarantine at a start once they are an hour old (it does not delete them). To keep their rows in the lake, run svc system --rebuild-catalog before starting.\n`,
    );
  }
  return 0;
}

/** `svc catalog quarantine [--purge]` (docs/OPERATIONS.md "Orphans at start and the quarantine"). */
async function quarantineCommand(paths: CatalogPaths, purge: boolean, io: CliIo): Promise<number> {
  const list = purge ? purgeQuarantine(paths.dataPath) : listQuarantine(paths.dataPath);
  if (list.length === 0) {
    await io.out(`the quarantine ${paths.dataPath}/_quarantine is empty\n`);
    return 0;
  }
  const lines = list.map((q) => `${q.folder}: ${q.files} file(s), ${humanBytes(q.bytes)}`);
  const files = list.reduce((n, q) => n + q.files, 0);
  lines.push(
    purge ? `deleted ${files} quarantined file(s)` : `${files} file(s); svc catalog quarantine --purge deletes them`,
  );
  await io.out(lines.join("\n") + "\n");
  return 0;
}
