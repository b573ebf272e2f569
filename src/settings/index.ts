/**
 * Settings database (bun:sqlite): users, per-user settings, dashboards, mappings, API tokens,
 * IP aliases, HEP subscriptions, agents, share links, export jobs, revoked sessions. Entered only through here.
 */
export { SettingsDb, newId, nowMs } from "./db.ts";
export { MIGRATIONS, migrate } from "./migrations.ts";
export { createSettingsModule, createSettingsStore, type SettingsOptions, type SettingsStore } from "./store.ts";
export {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  cursorPattern,
  decodeCursor,
  encodeCursor,
  pageRequest,
  type Page,
  type PageInput,
  type PageRequest,
} from "./page.ts";
export {
  UsersRepo,
  USER_SORTS,
  type User,
  type UserCreate,
  type UserFilters,
  type UserUpdate,
  type UserWithSecret,
} from "./users-repo.ts";
export { UserSettingsRepo, type UserSetting } from "./user-settings-repo.ts";
export {
  DAY_MS,
  DEFAULT_TRANSACTION_RANGE,
  DEFINED_SETTINGS,
  normalizeSetting,
  normalizeTransactionRange,
  validateExportTransaction,
  type ExcludedAddress,
  type ExportTransactionSettings,
  type TransactionRange,
} from "./user-settings.ts";
export {
  SAVED_SEARCHES_MAX,
  SAVED_SEARCH_FIELD_RE,
  SAVED_SEARCH_FILTERS_MAX,
  SAVED_SEARCH_ID_RE,
  SAVED_SEARCH_LIST_MAX,
  SAVED_SEARCH_NAME_MAX,
  SAVED_SEARCH_RANGE_MAX_MIN,
  SAVED_SEARCH_VALUE_MAX,
  validateSavedSearches,
  type SavedFilterValue,
  type SavedSearch,
  type SavedSearches,
} from "./saved-searches.ts";
export { DashboardsRepo, DASHBOARD_SORTS, type Dashboard } from "./dashboards-repo.ts";
export { defaultDashboards, WidgetPlacementSchema, type DashboardDraft, type Widget } from "./default-dashboards.ts";
export {
  MappingsRepo,
  MAPPING_SORTS,
  stableGuid,
  userMappingKey,
  type GeneratedMapping,
  type MappingRow,
  type MappingSource,
  type MappingUpsert,
  type SyncOutcome,
} from "./mappings-repo.ts";
export {
  FIELD_INDEXES,
  FIELD_TYPES,
  FORM_TYPES,
  VIRTUAL_MATCHES,
  VIRTUAL_PATH_RE,
  canonicalFields,
  findField,
  normalizeFields,
  stableJson,
  validateFields,
  type FieldIndex,
  type FieldInput,
  type FieldObject,
  type FieldOption,
  type FieldType,
  type FormType,
  type VirtualBlock,
  type VirtualMatch,
} from "./mapping-fields.ts";
export { FieldsInputSchema, OverrideListSchema } from "./mapping-schema.ts";
export { seedMappingRows, seedMappings, type SeedReport } from "./mapping-seed.ts";
export {
  applyUserOverrides,
  parseOverrideList,
  readUserOverrides,
  sortByPosition,
  widgetFields,
  type UserFieldOverride,
  type UserOverrides,
} from "./user-mapping.ts";
export { TokensRepo, TOKEN_SORTS, type ApiToken, type ApiTokenCreate, type ApiTokenUpdate } from "./tokens-repo.ts";
export { AliasesRepo, ALIAS_SORTS, MAX_CAPTURE_ID, type IpAlias, type IpAliasInput } from "./aliases-repo.ts";
export { createAliasResolver, type AliasEntry, type AliasResolver } from "./alias-resolver.ts";
export { HepSubsRepo, HEPSUB_SORTS, type HepSub, type HepSubInput } from "./hepsubs-repo.ts";
export { AgentsRepo, AGENT_SORTS, type Agent, type AgentSeen } from "./agents-repo.ts";
export { ExportJobsRepo, ShareLinksRepo, type ExportJob, type ExportStatus, type ShareLink } from "./shares-repo.ts";
export { RevokedSessionsRepo, type RevokedSession } from "./revoked-sessions-repo.ts";
export {
  EnrolledNodesRepo,
  type AnnounceOutcome,
  type EnrolledNode,
  type EnrolledStatus,
} from "./enrolled-nodes-repo.ts";
