/**
 * Line-protocol tables in the lake (docs/LINE-PROTOCOL.md "Table and column rules"): created on first sight,
 * grown column by column, DDL serialised per table (rule 7). Names are matched case-insensitively
 * because the catalog and DuckDB resolve identifiers that way: `CPU` and `cpu` are one table, and a
 * tag `Host` lands in an existing column `host`.
 */
import {
  errorMessage,
  fail,
  ok,
  type ColumnDef,
  type ColumnType,
  type Logger,
  type Result,
  type RowWriter,
  type TableDef,
} from "../../core/index.ts";
import { isLineProtocolLayout, lineProtocolTableDef, LP_TIME_COLUMN } from "./names.ts";

/**
 * What the receiver needs from the lake (main.ts passes the Lake, which has these methods). Ingest
 * never imports the lake (docs/STYLE.md "Layers"): this interface is the boundary.
 */
export interface LpSink {
  defineTable(def: TableDef): Promise<void>;
  /** Appends columns in one catalog snapshot; never alters existing ones. */
  extendTable(key: string, columns: ColumnDef[]): Promise<TableDef>;
  table(key: string): TableDef | undefined;
  /** Tables defined in this process. */
  tables(): TableDef[];
  /** Tables in the catalog, also those nobody defined in this process yet (after a restart). */
  storedTables(): Promise<Array<Pick<TableDef, "schema" | "name" | "columns">>>;
  /** One row in the table's column order; undefined when the lake is full or stopping. */
  row(key: string): RowWriter | undefined;
  /** Rows accepted and not yet in Parquet, all tables (compared with `maxBufferedRows`). */
  backlog(): number;
  /** Bytes the lake can still spool before its disk reserve (docs/ARCHITECTURE.md "When a flush fails"). */
  spoolRoom?(): number;
  /**
   * Resolves once the rows of `key` written so far survive a kill -9 (in a spool file: true) or
   * were lost (false). A write is answered only then (docs/ARCHITECTURE.md "Write path").
   */
  whenSpooled?(key: string): Promise<boolean>;
  /**
   * The catalog's current snapshot id: when it changes, another writer of a shared catalog may have
   * created tables, which the receiver then adopts (docs/DUCKLAKE.md "PostgreSQL catalog").
   */
  snapshotId?(): Promise<number>;
}

/**
 * What creating tables needs on top (the Lake again): point lookups instead of listings, so a new
 * table costs the same with 10 or 1000 tables (docs/BENCHMARKS.md "Line protocol: many tables"), and the lake's naming rules.
 */
export interface LpTableSink extends LpSink {
  /** One catalog table by name, case-insensitive (an indexed lookup, not a listing). */
  storedTable(schema: string, name: string): Promise<Pick<TableDef, "schema" | "name" | "columns"> | undefined>;
  /** The key of a table defined in this process, matched case-insensitively. */
  findTable(schema: string, name: string): string | undefined;
  /** How the lake already spells a schema (case-insensitive), or undefined for a new one. */
  schemaSpelling(schema: string): Promise<string | undefined>;
  /**
   * Why `schema.name` cannot be a table (a reserved DuckDB or lake name, a clash with a buffer
   * view), or undefined; without `name`, whether `schema` can be a schema.
   */
  nameProblem(schema: string, name?: string): string | undefined;
}

export type PrepareFailure = "not_line_protocol_table" | "ddl_failed" | "table_limit" | "column_limit";

const keyOf = (schema: string, name: string) => `${schema}.${name}`;
const lower = (s: string) => s.toLowerCase();

/**
 * Grows a table defined in this process by columns the catalog has and it does not (another writer
 * of a shared catalog added them). Serialised with the table's other DDL (`LpTables.adoptColumns`).
 */
export type GrowTable = (key: string, columns: ColumnDef[]) => Promise<unknown>;

/**
 * Defines every line-protocol table of the catalog that this process has not defined yet, so
 * tables written before a restart are queryable (and discoverable) before the next write, and
 * adopts the columns another writer of a shared catalog added to a table this process already has
 * (docs/DUCKLAKE.md "PostgreSQL catalog"; only with `grow`, which the receiver serialises with its
 * own DDL). Returns how many tables were adopted.
 */
export async function adoptStoredTables(sink: LpSink, logger: Logger, grow?: GrowTable): Promise<number> {
  const known = new Map(sink.tables().map((d) => [lower(keyOf(d.schema, d.name)), d]));
  let adopted = 0;
  for (const t of await sink.storedTables()) {
    if (!isLineProtocolLayout(t.columns)) continue;
    const mine = known.get(lower(keyOf(t.schema, t.name)));
    if (mine) {
      if (!grow || !isLineProtocolLayout(mine.columns)) continue;
      const fresh = newColumns(
        mine.columns.map((c) => c.name),
        t.columns,
      );
      if (fresh.length === 0) continue;
      const key = keyOf(mine.schema, mine.name);
      try {
        await grow(key, fresh);
        logger.info("line-protocol columns of other writers adopted from the catalog", {
          table: key,
          columns: fresh.map((c) => c.name),
        });
      } catch (e) {
        logger.warn("stored line-protocol columns not adopted", { table: key, error: errorMessage(e) });
      }
      continue;
    }
    try {
      await sink.defineTable(
        lineProtocolTableDef(
          t.schema,
          t.name,
          t.columns.map((c) => ({ name: c.name, type: c.type })),
        ),
      );
      adopted++;
    } catch (e) {
      // Its rows stay in the catalog; the lake logged and counted it (svc_lake_tables_refused_total)
      // when the name is reserved. Every other table is adopted.
      logger.warn("stored line-protocol table not adopted", { table: keyOf(t.schema, t.name), error: errorMessage(e) });
    }
  }
  return adopted;
}

/** A new column as the batch first saw it (rule 5: typed from the first observed value). */
export interface ColumnWish {
  name: string;
  type: ColumnType;
}

export class LpTables {
  /** Lower-case `schema.table` → the key the lake knows the table by. */
  private readonly canonical = new Map<string, string>();
  /** Per-table DDL chain (rule 7). */
  private readonly locks = new Map<string, Promise<unknown>>();
  /**
   * Line-protocol tables of this process, counted once from the lake at the first creation (the
   * receiver adopts the catalog's tables before it listens) and then per creation, a slot taken
   * before the creation awaits anything so concurrent writes cannot overshoot the cap.
   */
  private count: number | undefined;

  constructor(
    private readonly sink: LpTableSink,
    private readonly logger: Logger,
    /** `ingest.line_protocol.max_tables`: creations beyond it are refused (`table_limit`). */
    private readonly maxTables = Number.POSITIVE_INFINITY,
    /** `ingest.line_protocol.max_columns`: a table never grows beyond it (`column_limit`). */
    private readonly maxColumns = Number.POSITIVE_INFINITY,
  ) {}

  /** The lake key of a table already known to this process (any case), or undefined. */
  resolve(schema: string, name: string): string | undefined {
    const k = lower(keyOf(schema, name));
    const hit = this.canonical.get(k);
    if (hit !== undefined) return hit;
    const key = this.sink.findTable(schema, name);
    if (key !== undefined) this.canonical.set(k, key);
    return key;
  }

  /**
   * Makes sure `schema.name` exists with (at least) the wished columns and returns its key. Runs
   * under the table's DDL lock; columns already present (any case) are left exactly as they are.
   */
  prepare(schema: string, name: string, wishes: readonly ColumnWish[]): Promise<Result<string, PrepareFailure>> {
    const lockKey = lower(keyOf(schema, name));
    const prev = this.locks.get(lockKey) ?? Promise.resolve();
    const run = prev.then(() => this.prepareLocked(schema, name, wishes));
    const tail = run.catch(() => undefined);
    this.locks.set(lockKey, tail);
    void tail.then(() => {
      if (this.locks.get(lockKey) === tail) this.locks.delete(lockKey);
    });
    return run;
  }

  /**
   * Adopts `columns` the catalog holds for table `key` (another writer added them) under the
   * table's DDL lock, so it never races a write's own growth of the table. The column cap does not
   * apply: the columns already exist in the catalog, this process only catches up.
   */
  adoptColumns(key: string, columns: ColumnDef[]): Promise<unknown> {
    const lockKey = lower(key);
    const prev = this.locks.get(lockKey) ?? Promise.resolve();
    const run = prev.then(async () => {
      const def = this.sink.table(key);
      if (!def) return;
      const fresh = newColumns(
        def.columns.map((c) => c.name),
        columns,
      );
      if (fresh.length > 0) await this.sink.extendTable(key, fresh);
    });
    const tail = run.catch(() => undefined);
    this.locks.set(lockKey, tail);
    void tail.then(() => {
      if (this.locks.get(lockKey) === tail) this.locks.delete(lockKey);
    });
    return run;
  }

  private async prepareLocked(
    schema: string,
    name: string,
    wishes: readonly ColumnWish[],
  ): Promise<Result<string, PrepareFailure>> {
    let key = this.resolve(schema, name);
    try {
      if (key === undefined) {
        const wanted = 1 + newColumns([LP_TIME_COLUMN], wishes).length;
        if (wanted > this.maxColumns && (await this.sink.storedTable(schema, name)) === undefined)
          return this.columnLimit(keyOf(schema, name), wanted);
        const created = await this.createWithinCap(schema, name, wishes);
        if (!created.ok) return created;
        key = created.value;
      }
      const def = this.sink.table(key);
      if (!def) return fail("ddl_failed", `table ${key} vanished`);
      if (!isLineProtocolLayout(def.columns))
        return fail(
          "not_line_protocol_table",
          `table ${key} is not a line-protocol table (its first column is not "time" TIMESTAMP)`,
        );
      const fresh = newColumns(
        def.columns.map((c) => c.name),
        wishes,
      );
      if (def.columns.length + fresh.length > this.maxColumns)
        return this.columnLimit(key, def.columns.length + fresh.length);
      if (fresh.length > 0) {
        await this.sink.extendTable(key, fresh);
        this.logger.debug("line-protocol columns added", { table: key, columns: fresh.map((c) => c.name) });
      }
      return ok(key);
    } catch (e) {
      // The reason stays in the log: the client learns which table failed, never the engine's text.
      this.logger.error("line-protocol table DDL failed", {
        table: key ?? keyOf(schema, name),
        error: errorMessage(e),
      });
      return fail("ddl_failed", "see the appliance log");
    }
  }

  private columnLimit(key: string, wanted: number): Result<string, PrepareFailure> {
    return fail(
      "column_limit",
      `table ${key} would have ${wanted} columns, more than ingest.line_protocol.max_columns (${this.maxColumns}); points with fewer distinct tag and field keys are still accepted`,
    );
  }

  private async createWithinCap(
    schema: string,
    name: string,
    wishes: readonly ColumnWish[],
  ): Promise<Result<string, PrepareFailure>> {
    this.count ??= this.sink.tables().filter((d) => isLineProtocolLayout(d.columns)).length;
    // A table stored before a restart but not adopted (another producer's layout) is refused in create().
    if (this.count >= this.maxTables && (await this.sink.storedTable(schema, name)) === undefined) {
      return fail(
        "table_limit",
        `table ${keyOf(schema, name)} would exceed ingest.line_protocol.max_tables (${this.maxTables} line-protocol tables); writes to existing tables are still accepted`,
      );
    }
    this.count++;
    let created: Result<string, PrepareFailure> | undefined;
    try {
      created = await this.create(schema, name, wishes);
      return created;
    } finally {
      if (!created?.ok) this.count--;
    }
  }

  /**
   * A table this process does not know yet. The catalog is asked first: a stored table of another
   * producer (HEP, OTLP) with the same name must never be grown into a line-protocol table.
   */
  private async create(
    schema: string,
    name: string,
    wishes: readonly ColumnWish[],
  ): Promise<Result<string, PrepareFailure>> {
    const k = lower(keyOf(schema, name));
    // Point lookups only: listing every table here made each creation cost O(tables) (docs/BENCHMARKS.md "Line protocol: many tables").
    const stored = await this.sink.storedTable(schema, name);
    if (stored && !isLineProtocolLayout(stored.columns)) {
      return fail(
        "not_line_protocol_table",
        `table ${keyOf(stored.schema, stored.name)} is not a line-protocol table (its first column is not "time" TIMESTAMP)`,
      );
    }
    // Reuse the spelling the catalog (or another table of this process) already has for the schema.
    const sameSchema = stored?.schema ?? (await this.sink.schemaSpelling(schema)) ?? schema;
    const tableName = stored?.name ?? name;
    const columns: ColumnDef[] = stored
      ? stored.columns.map((c) => ({ name: c.name, type: c.type }))
      : [{ name: LP_TIME_COLUMN, type: "timestamp" }, ...newColumns([LP_TIME_COLUMN], wishes)];
    await this.sink.defineTable(lineProtocolTableDef(sameSchema, tableName, columns));
    const key = keyOf(sameSchema, tableName);
    this.canonical.set(k, key);
    this.logger.info("line-protocol table created", { table: key, columns: columns.length });
    return ok(key);
  }
}

/** The first wish per case-insensitive name that `existing` does not have yet. */
function newColumns(existing: readonly string[], wishes: readonly ColumnWish[]): ColumnDef[] {
  const seen = new Set(existing.map(lower));
  const out: ColumnDef[] = [];
  for (const w of wishes) {
    const l = lower(w.name);
    if (seen.has(l)) continue;
    seen.add(l);
    out.push({ name: w.name, type: w.type });
  }
  return out;
}
