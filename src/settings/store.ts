import type { Logger, Module } from "../core/index.ts";
import { AgentsRepo } from "./agents-repo.ts";
import { AliasesRepo } from "./aliases-repo.ts";
import { DashboardsRepo } from "./dashboards-repo.ts";
import { EnrolledNodesRepo } from "./enrolled-nodes-repo.ts";
import { SettingsDb } from "./db.ts";
import { HepSubsRepo } from "./hepsubs-repo.ts";
import { seedMappings } from "./mapping-seed.ts";
import { MappingsRepo } from "./mappings-repo.ts";
import { RevokedSessionsRepo } from "./revoked-sessions-repo.ts";
import { ExportJobsRepo, ShareLinksRepo } from "./shares-repo.ts";
import { TokensRepo } from "./tokens-repo.ts";
import { UserSettingsRepo } from "./user-settings-repo.ts";
import { UsersRepo } from "./users-repo.ts";

/** Every repository of the settings database, sharing one connection. */
export interface SettingsStore {
  readonly db: SettingsDb;
  readonly users: UsersRepo;
  readonly userSettings: UserSettingsRepo;
  readonly dashboards: DashboardsRepo;
  readonly mappings: MappingsRepo;
  readonly tokens: TokensRepo;
  readonly aliases: AliasesRepo;
  readonly hepSubs: HepSubsRepo;
  readonly agents: AgentsRepo;
  readonly shareLinks: ShareLinksRepo;
  readonly exportJobs: ExportJobsRepo;
  readonly revokedSessions: RevokedSessionsRepo;
  readonly enrolledNodes: EnrolledNodesRepo;
}

export interface SettingsOptions {
  /** `coordinator.settings_db_path`. */
  path: string;
  /** `coordinator.widgets.control.games`: whether default game dashboards are seeded. */
  games: boolean;
}

export function createSettingsStore(opts: SettingsOptions): SettingsStore {
  const db = new SettingsDb(opts.path);
  return {
    db,
    users: new UsersRepo(db),
    userSettings: new UserSettingsRepo(db),
    dashboards: new DashboardsRepo(db, { games: opts.games }),
    mappings: new MappingsRepo(db),
    tokens: new TokensRepo(db),
    aliases: new AliasesRepo(db),
    hepSubs: new HepSubsRepo(db),
    agents: new AgentsRepo(db),
    shareLinks: new ShareLinksRepo(db),
    exportJobs: new ExportJobsRepo(db),
    revokedSessions: new RevokedSessionsRepo(db),
    enrolledNodes: new EnrolledNodesRepo(db),
  };
}

/** Lifecycle: start opens the file and migrates; stop closes it (after the HTTP server stopped). */
export function createSettingsModule(opts: SettingsOptions, logger: Logger): { store: SettingsStore; module: Module } {
  const store = createSettingsStore(opts);
  const module: Module = {
    name: "settings-db",
    async start() {
      const v = store.db.open();
      logger.info("settings database open", {
        path: opts.path,
        schema_version: v.toVersion,
        migrated_from: v.fromVersion,
      });
      // Built-in protocol mappings at every start (mapping-seed.ts: never overwrites operator edits).
      logger.info("protocol mappings seeded", { ...seedMappings(store.mappings) });
    },
    async stop() {
      store.db.close();
    },
  };
  return { store, module };
}
