/**
 * Line-protocol tables seen from the coordinator (docs/LINE-PROTOCOL.md "Discovery response", "Automatic
 * mapping rows"; docs/API.md "Mapping rows", proto 300).
 */
import { type Static, t } from "elysia";
import type { TableDef } from "../../core/index.ts";
import { isLineProtocolLayout, matchesTablePrefix } from "../../ingest/index.ts";
import { DUCKDB_TYPE } from "../../lake/index.ts";
import { stableGuid, type FieldInput, type MappingsRepo, type SyncOutcome } from "../../settings/index.ts";

export const LP_HEPID = 300;
export const LP_CATALOG = "svc_lake";

export const LpColumnSchema = t.Object({
  name: t.String(),
  data_type: t.String({ description: "DuckDB type name" }),
  nullable: t.Boolean(),
  position: t.Integer({ description: "1-based, catalog order (`time` is 1)" }),
});
export type LpColumnItem = Static<typeof LpColumnSchema>;

export const LpTableSchema = t.Object({
  catalog: t.String(),
  schema: t.String(),
  name: t.String(),
  fqn: t.String({ description: "catalog.schema.name, as user SQL names it" }),
  columns: t.Optional(t.Array(LpColumnSchema, { description: "left out with with_columns=false" })),
});
export type LpTableItem = Static<typeof LpTableSchema>;

/** Line-protocol tables of the lake selected by `prefix` (see `matchesTablePrefix`), by schema then name. */
export function lineProtocolTables(tables: readonly TableDef[], prefix: string, schema?: string): TableDef[] {
  const wantSchema = schema?.toLowerCase();
  return tables
    .filter(
      (d) =>
        isLineProtocolLayout(d.columns) &&
        matchesTablePrefix(d.name, prefix) &&
        (wantSchema === undefined || d.schema.toLowerCase() === wantSchema),
    )
    .sort((a, b) =>
      a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
}

export function tableItem(def: TableDef, withColumns: boolean): LpTableItem {
  const item: LpTableItem = {
    catalog: LP_CATALOG,
    schema: def.schema,
    name: def.name,
    fqn: `${LP_CATALOG}.${def.schema}.${def.name}`,
  };
  if (withColumns) {
    // DuckLake columns are nullable (no NOT NULL constraint is written), `time` included.
    item.columns = def.columns.map((c, i) => ({
      name: c.name,
      data_type: DUCKDB_TYPE[c.type],
      nullable: true,
      position: i + 1,
    }));
  }
  return item;
}

/** `profile` of a line-protocol mapping and `event_type` of its searches (docs/API.md "Protocol types": double underscore). */
export const lpProfile = (def: Pick<TableDef, "schema" | "name">) => `${def.schema}__${def.name}`;

/**
 * `fields_mapping` generated from the live columns (docs/API.md "Field object", last sentences): `time`
 * is the primary, correlating field; SQL types map to `datetime`, `switch`, numeric input or free
 * text; `raw` and `_`-prefixed columns start hidden.
 */
export function lineProtocolFields(def: TableDef): FieldInput[] {
  return def.columns.map((c, i): FieldInput => {
    const primary = c.name === def.timeColumn;
    const numeric = c.type === "int32" || c.type === "int64" || c.type === "uint64" || c.type === "float64";
    return {
      id: c.name,
      name: c.name,
      type: c.type === "float64" ? "number" : numeric ? "integer" : c.type === "boolean" ? "boolean" : "string",
      form_type: c.type === "timestamp" || c.type === "date" ? "datetime" : c.type === "boolean" ? "switch" : "input",
      position: (i + 1) * 10,
      index: primary ? "primary" : "none",
      ...(primary ? { sid_type: true, selected: true } : {}),
      ...(c.name === "raw" || c.name.startsWith("_") ? { hide: true } : {}),
    };
  });
}

export type LpSyncReport = Record<SyncOutcome, number>;

/**
 * One mapping row per line-protocol table (docs/LINE-PROTOCOL.md "Automatic mapping rows"): upsert by the
 * stable guid of `lp:<schema>:<table>`; `syncGenerated` writes only when the content differs
 * semantically, never touches operator columns, leaves operator-owned rows and vanished tables alone.
 */
export function syncLineProtocolMappings(
  tables: readonly TableDef[],
  prefix: string,
  mappings: MappingsRepo,
): LpSyncReport {
  const report: LpSyncReport = { inserted: 0, updated: 0, unchanged: 0, kept: 0 };
  for (const def of lineProtocolTables(tables, prefix)) {
    const outcome = mappings.syncGenerated({
      guid: stableGuid(`lp:${def.schema}:${def.name}`),
      source: "sync",
      hepid: LP_HEPID,
      profile: lpProfile(def),
      hepAlias: `LP_${def.name.toUpperCase()}`,
      fieldsMapping: lineProtocolFields(def),
    });
    report[outcome]++;
  }
  return report;
}
