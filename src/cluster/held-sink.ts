/**
 * The sink of the central's decoding of forwarded line-protocol and OTLP requests (docs/DEPLOY.md
 * "Forward protocol"): tables are defined and grown in the lake as the receivers do, but the rows
 * go into CSV batches held here, not into the spool, until the forward receiver commits them with
 * the senders' marks in one transaction (Lake.commitRows). A table that grows between two rows
 * starts a new batch: each batch keeps the layout its rows were written with.
 */
import { csvColumns, newCsvBatch, type CsvBatch, type RowWriter, type TableDef } from "../core/index.ts";
import type { LpTableSink } from "../ingest/index.ts";
import type { Lake } from "../lake/index.ts";

export interface HeldBatch {
  key: string;
  bytes: Uint8Array;
  rows: number;
  columns: number;
  span?: { min: number; max: number };
  layout: TableDef;
}

interface Open {
  def: TableDef;
  batch: CsvBatch;
  hasUuid: boolean;
}

export class HeldSink implements LpTableSink {
  private readonly open = new Map<string, Open>();
  private readonly sealed: HeldBatch[] = [];
  private rows = 0;

  constructor(
    private readonly lake: Lake,
    /** Rows held elsewhere by the receiver (the buffer bound counts them). */
    private readonly heldElsewhere: () => number,
  ) {}

  defineTable(def: TableDef): Promise<void> {
    return this.lake.defineTable(def);
  }
  extendTable(key: string, columns: TableDef["columns"]): Promise<TableDef> {
    return this.lake.extendTable(key, columns);
  }
  table(key: string): TableDef | undefined {
    return this.lake.table(key);
  }
  tables(): TableDef[] {
    return this.lake.tables();
  }
  storedTables(): Promise<Array<Pick<TableDef, "schema" | "name" | "columns">>> {
    return this.lake.storedTables();
  }
  storedTable(schema: string, name: string): Promise<Pick<TableDef, "schema" | "name" | "columns"> | undefined> {
    return this.lake.storedTable(schema, name);
  }
  findTable(schema: string, name: string): string | undefined {
    return this.lake.findTable(schema, name);
  }
  schemaSpelling(schema: string): Promise<string | undefined> {
    return this.lake.schemaSpelling(schema);
  }
  nameProblem(schema: string, name?: string): string | undefined {
    return this.lake.nameProblem(schema, name);
  }
  backlog(): number {
    return this.lake.backlog() + this.heldElsewhere() + this.rows;
  }
  spoolRoom(): number {
    return this.lake.spoolRoom();
  }

  row(key: string): RowWriter | undefined {
    const def = this.lake.table(key);
    if (!def) return undefined;
    let t = this.open.get(key);
    if (!t || t.def !== def) {
      if (t) this.sealOne(key, t);
      t = { def, batch: newCsvBatch(def, 1 << 16), hasUuid: def.columns.some((c) => c.derived === "uuid") };
      this.open.set(key, t);
    }
    if (!t.batch.discardPartialRow()) this.rows++;
    if (t.hasUuid) t.batch.uuidv7(performance.timeOrigin + performance.now());
    return t.batch;
  }

  /** Rows written and not yet taken by `take`. */
  pending(): number {
    return this.rows;
  }

  /** Every batch with rows, handed over (the open ones sealed). */
  take(): HeldBatch[] {
    for (const [key, t] of this.open) this.sealOne(key, t);
    this.open.clear();
    const out = this.sealed.splice(0);
    this.rows = 0;
    return out;
  }

  private sealOne(key: string, t: Open): void {
    const b = t.batch;
    b.discardPartialRow();
    if (b.rows === 0) return;
    this.sealed.push({
      key,
      bytes: b.view(),
      rows: b.rows,
      columns: csvColumns(t.def).length,
      layout: t.def,
      ...(!b.timeNulls && b.minTime <= b.maxTime ? { span: { min: b.minTime, max: b.maxTime } } : {}),
    });
    t.batch = newCsvBatch(t.def, 1 << 16);
  }
}
