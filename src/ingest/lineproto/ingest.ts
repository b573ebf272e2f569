/**
 * One line-protocol write request, HTTP aside (docs/LINE-PROTOCOL.md "Body", "Table and column
 * rules", "Structured HEP table mode", "Errors"). The receiver maps the outcome to a status.
 *
 * Multi-line rule (ours; the reference decoder rejects a whole body at its first error): every line
 * that parses is written, every line that does not is skipped, and the answer is 400 listing each
 * bad line with its number, column and reason. The same holds for keys that cannot be stored
 * (names over 255 characters): the rest of the point is written and the key is listed. A tag or
 * field named `time` and an unsigned value above 2^63-1 are accepted (docs/ARCHITECTURE.md
 * "Line-protocol types"). InfluxDB 3's `write_lp` answers a partial write the same way. A value whose
 * type differs from its column's is dropped and counted (stage `type_mismatch`) without a 400
 * (rule 6); so is a point that loses every field that way.
 */
import { errorMessage, SPOOL_MAX_LINE_BYTES, type Counter, type Logger } from "../../core/index.ts";
import { writeHepTable, hepTableRequest } from "./hep-mode.ts";
import { MAX_NAME_LENGTH, schemaFor, tableNameFor } from "./names.ts";
import { parseLineProtocol, PRECISION_NS, type LpPoint, type LpPrecision } from "./parse.ts";
import { planColumns, writePoints, type LineIssue, type WriteCounts } from "./rows.ts";
import { LpTables, type LpTableSink } from "./tables.ts";

export interface LpIngestOptions {
  /** `default_db`: schema when the request names none (empty → `main`). */
  defaultDb: string;
  /** `table_prefix`, validated (ASCII letters, digits, `_`). */
  tablePrefix: string;
  /** `allow_hep_sip_call`: structured HEP table mode. */
  allowHepSipCall: boolean;
  /** `max_tables`: line-protocol tables at most; a point that would create one more is refused (400, `table_limit`). */
  maxTables?: number;
  /** `max_columns`: columns of one table at most (time, tags, fields); points that would add more are refused (400, `column_limit`). */
  maxColumns?: number;
  /**
   * The lake's `max_buffered_rows`: a request that would not fit is refused whole (503) instead of
   * half-written, so the client's retry does not duplicate the half that got in.
   */
  maxBufferedRows?: number;
  /**
   * A request whose rows were handed to the lake, called before the spool wait: the edge's forward
   * log takes it (docs/DEPLOY.md "Forward log"). Absent on the central's own decoding of forwarded requests.
   */
  onWritten?: (req: LpWriteRequest) => void;
}

export interface LpIngestMetrics {
  points: Counter<"database">;
  errors: Counter<"stage">;
}

export interface LpWriteRequest {
  body: Uint8Array;
  /** `db` or `bucket` as the client sent it (sanitised here). */
  database: string | undefined;
  precision: LpPrecision;
  /** Receive time, for points without a timestamp (rule 3). */
  nowNs: bigint;
}

/**
 * `parse_error` and `bad_request` are 400 (with `lines`); `server_error` (table DDL or row building
 * failed) is 500; `unavailable` (the lake's write buffer is full or it is stopping) is 503 with
 * Retry-After, so clients back off and retry instead of losing the batch.
 */
export type LpOutcome = "ok" | "parse_error" | "bad_request" | "server_error" | "unavailable";

export interface LpWriteResult {
  outcome: LpOutcome;
  /** Human-readable summary (the `error` member of the response) when not ok. */
  message: string;
  written: number;
  lines: LineIssue[];
}

/** The reference stamps points without a timestamp with "now" truncated to the write precision. */
const nowAtPrecision = (nowNs: bigint, p: LpPrecision) => nowNs - (nowNs % PRECISION_NS[p]);

export class LpIngest {
  readonly tables: LpTables;

  constructor(
    private readonly sink: LpTableSink,
    private readonly opts: LpIngestOptions,
    private readonly metrics: LpIngestMetrics,
    private readonly logger: Logger,
  ) {
    this.tables = new LpTables(sink, logger, opts.maxTables, opts.maxColumns);
  }

  async write(req: LpWriteRequest): Promise<LpWriteResult> {
    const parsed = parseLineProtocol(req.body, { precision: req.precision });
    const lines: LineIssue[] = parsed.errors.map((e) => ({
      line: e.line,
      column: e.column,
      reason: e.reason,
      message: e.message,
    }));
    if (parsed.errors.length > 0) this.metrics.errors.inc({ stage: "parse" }, parsed.errors.length);
    const nowNs = nowAtPrecision(req.nowNs, req.precision);
    if (parsed.points.length === 0) {
      return finish(
        lines.length > 0 ? "parse_error" : "bad_request",
        lines.length > 0 ? "no point could be parsed" : "the body holds no points",
        0,
        lines,
      );
    }
    const full = this.wouldOverflow(parsed.points.length, req.body.length);
    if (full) return finish("unavailable", full, 0, lines);
    if (this.opts.allowHepSipCall) {
      const hep = hepTableRequest(parsed.points);
      if (hep.kind === "reject") return finish("bad_request", hep.message, 0, lines);
      if (hep.kind === "hep") {
        const r = await writeHepTable(this.sink, hep.table, parsed.points, { precision: req.precision, nowNs }, lines);
        if (r.written > 0) this.opts.onWritten?.(req);
        if (r.written > 0 && !(await this.spooled([`${hep.table.schema}.${hep.table.name}`]))) {
          this.metrics.errors.inc({ stage: "insert" }, r.written);
          return finish("unavailable", LOST_ON_THE_WAY, 0, lines);
        }
        if (r.written > 0) this.metrics.points.inc({ database: "main" }, r.written);
        if (r.failure) this.metrics.errors.inc({ stage: r.failure.stage }, r.failure.points);
        if (r.failure)
          return finish(
            r.failure.stage === "insert" ? "unavailable" : "server_error",
            r.failure.message,
            r.written,
            lines,
          );
        return finish(outcomeOf(parsed.errors.length, lines), "", r.written, lines);
      }
    }
    return await this.writeTables(parsed.points, req, nowNs, lines, parsed.errors.length);
  }

  private async writeTables(
    points: LpPoint[],
    req: LpWriteRequest,
    nowNs: bigint,
    lines: LineIssue[],
    parseErrors: number,
  ): Promise<LpWriteResult> {
    const schema = schemaFor(req.database, this.opts.defaultDb);
    if (schema.length > MAX_NAME_LENGTH)
      return finish("bad_request", `database name of ${schema.length} characters exceeds ${MAX_NAME_LENGTH}`, 0, lines);
    // information_schema, pg_catalog, …: DuckDB cannot hold our views there (docs/ARCHITECTURE.md "Reserved names").
    const reservedSchema = this.sink.nameProblem(schema);
    if (reservedSchema) return finish("bad_request", reservedSchema, 0, lines);
    const groups = new Map<string, { name: string; points: LpPoint[] }>();
    for (const p of points) {
      const name = tableNameFor(this.opts.tablePrefix, p.measurement);
      const g = groups.get(name);
      if (g) g.points.push(p);
      else groups.set(name, { name, points: [p] });
    }
    const counts: WriteCounts = { written: 0, typeMismatch: 0, emptied: 0, refused: 0, tooLarge: [] };
    const failures: string[] = [];
    const ready: Array<{ key: string; points: LpPoint[] }> = [];
    for (const g of groups.values()) {
      const refused = this.reservedName(schema, g.name);
      if (refused) {
        for (const p of g.points) lines.push({ line: p.line, reason: "reserved_table", message: refused });
        continue;
      }
      if (g.name.length > MAX_NAME_LENGTH) {
        for (const p of g.points)
          lines.push({
            line: p.line,
            reason: "name_too_long",
            message: `table name of ${g.name.length} characters exceeds ${MAX_NAME_LENGTH}`,
          });
        continue;
      }
      const wishes = planColumns(g.points, lines);
      const r = await this.tables.prepare(schema, g.name, wishes);
      if (r.ok) ready.push({ key: r.value, points: g.points });
      else if (r.reason === "not_line_protocol_table" || r.reason === "table_limit" || r.reason === "column_limit")
        for (const p of g.points) lines.push({ line: p.line, reason: r.reason, message: r.detail ?? r.reason });
      else {
        this.metrics.errors.inc({ stage: "ddl" }, g.points.length);
        failures.push(`table ${schema}.${g.name} could not be created or altered: ${r.detail ?? r.reason}`);
      }
    }
    // Rows of every table in one synchronous run: each reads its table's layout as it is now.
    const row = (key: string) => this.sink.row(key);
    for (const t of ready) {
      const def = this.sink.table(t.key);
      if (!def) {
        counts.refused += t.points.length;
        continue;
      }
      try {
        writePoints(row, def, t.key, t.points, nowNs, counts);
      } catch (e) {
        // A broken invariant (row layout); the points of this table are lost, the request says so.
        this.logger.error("line-protocol row building failed", { table: t.key, error: errorMessage(e) });
        failures.push(`insert into ${t.key} failed; see the appliance log`);
      }
    }
    if (counts.written > 0) this.opts.onWritten?.(req);
    // Answered once the rows are on disk (the spool), not while they are only in memory: a 204
    // must survive a kill -9 (docs/ARCHITECTURE.md "Write path").
    if (counts.written > 0 && !(await this.spooled(ready.map((t) => t.key)))) {
      this.metrics.errors.inc({ stage: "insert" }, counts.written);
      return finish("unavailable", LOST_ON_THE_WAY, 0, lines);
    }
    const tooLarge = counts.tooLarge ?? [];
    for (const line of tooLarge)
      lines.push({
        line,
        reason: "point_too_large",
        message: `the point's values take more than ${SPOOL_MAX_LINE_BYTES} bytes in the lake's write buffer; split it into smaller points`,
      });
    if (tooLarge.length > 0) this.metrics.errors.inc({ stage: "parse" }, tooLarge.length);
    if (counts.written > 0) this.metrics.points.inc({ database: schema }, counts.written);
    if (counts.typeMismatch > 0) this.metrics.errors.inc({ stage: "type_mismatch" }, counts.typeMismatch);
    if (counts.refused > 0) {
      this.metrics.errors.inc({ stage: "insert" }, counts.refused);
      failures.push(`the lake refused ${counts.refused} point(s) (write buffer full or shutting down)`);
    }
    if (failures.length > 0) {
      const outcome = failures.length === 1 && counts.refused > 0 ? "unavailable" : "server_error";
      return finish(outcome, `${failures.join("; ")}; ${counts.written} point(s) written`, counts.written, lines);
    }
    return finish(outcomeOf(parseErrors, lines), "", counts.written, lines);
  }

  /** Whether the rows written to `keys` so far reached the spool (a sink without a spool: yes). */
  private async spooled(keys: readonly string[]): Promise<boolean> {
    const wait = this.sink.whenSpooled;
    if (!wait) return true;
    const oks = await Promise.all(keys.map((k) => wait.call(this.sink, k)));
    return oks.every(Boolean);
  }

  /** Refuses the whole request (counted as insert failures) when the lake cannot take all of it now. */
  private wouldOverflow(points: number, bytes: number): string | undefined {
    // The body's size is close to its spool CSV: refused whole rather than cut at the reserve.
    const room = this.sink.spoolRoom?.() ?? Number.POSITIVE_INFINITY;
    if (bytes > room) {
      this.metrics.errors.inc({ stage: "insert" }, points);
      return "the lake's disk is nearly full (storage.lakehouse.reserve_free_bytes); nothing was written, retry later";
    }
    const max = this.opts.maxBufferedRows;
    if (max === undefined) return undefined;
    const waiting = this.sink.backlog();
    if (waiting + points <= max) return undefined;
    this.metrics.errors.inc({ stage: "insert" }, points);
    return `the lake's write buffer is full (${waiting} of ${max} rows waiting for Parquet); nothing was written, retry later`;
  }

  /**
   * Rule 7: with structured HEP mode off, `hep_proto_*` names are HEP tables, not ours, and
   * `mem_hep_proto_*` the buffer views of HEP tables (docs/ARCHITECTURE.md "Reserved names"), even of one not created yet.
   * `mem_<t>` is the lake's name for the buffer view of table `<t>`, so a table `mem_x` next to a
   * table `x` would hide one of the two views; whichever comes second is refused (the lake's rule).
   */
  private reservedName(schema: string, name: string): string | undefined {
    const lower = name.toLowerCase();
    if (lower.startsWith("hep_proto_")) {
      return `measurement maps to table "${name}": hep_proto_* tables take writes only in structured HEP table mode (ingest.line_protocol.allow_hep_sip_call)`;
    }
    if (lower.startsWith("mem_hep_proto_"))
      return `table "${name}" is reserved: mem_hep_proto_* names the buffer views of HEP tables; use another measurement or a table_prefix`;
    return this.sink.nameProblem(schema, name);
  }
}

/** A spool write failed (disk full, I/O error): the rows are counted as lost by the lake; the client retries. */
const LOST_ON_THE_WAY =
  "the lake could not write the points to disk (see the appliance log and /health); points of this request may be missing, retry later";

function outcomeOf(parseErrors: number, lines: readonly LineIssue[]): LpOutcome {
  if (parseErrors > 0) return "parse_error";
  return lines.length > 0 ? "bad_request" : "ok";
}

function finish(outcome: LpOutcome, headline: string, written: number, lines: LineIssue[]): LpWriteResult {
  lines.sort((a, b) => a.line - b.line || (a.column ?? 0) - (b.column ?? 0));
  if (outcome === "ok") return { outcome, message: "", written, lines };
  const head = headline || `partial write: ${written} point(s) written`;
  if (lines.length === 0) return { outcome, message: head, written, lines };
  const shown = lines
    .slice(0, 5)
    .map((l) => `line ${l.line}${l.column ? `:${l.column}` : ""}: ${l.message}`)
    .join("; ");
  const more = lines.length > 5 ? ` (and ${lines.length - 5} more)` : "";
  return { outcome, message: `${head}, ${lines.length} problem(s): ${shown}${more}`, written, lines };
}
