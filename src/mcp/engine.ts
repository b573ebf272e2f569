import type { Config } from "../config/index.ts";
import {
  AppError,
  DURATION_BUCKETS_SECONDS,
  type Histogram,
  type Logger,
  type MetricsRegistry,
} from "../core/index.ts";
import { sipTableFor } from "../sip/index.ts";
import { asksForSql, isSqlStatement, withoutDirectives } from "./detect.ts";
import { FILTER_TEXT_KEYS, mergeFilters, summaryOf, type NlFilters } from "./filters.ts";
import { LlmBridge, LlmError } from "./llm.ts";
import { understand } from "./phrases.ts";
import { generateSql, validateMcpSql } from "./sql.ts";
import { timeRange } from "./time-words.ts";

/**
 * One natural-language request, whoever asks: `POST /mcp/query` (in-process backend), the tools of
 * `svc mcp` (HTTP backend: `POST /transactions/search`, `POST /query`) and the tools served at
 * `/mcp` by `svc serve` (docs/MCP.md). Text → filters (regex, model, or both) → the structured
 * search or the generated, validated SQL. Nothing from the text or the model is run as SQL.
 */
export type McpMode = "auto" | "structured" | "sql";
export type McpParser = "auto" | "llm" | "regex";
export type ParserUsed = "llm" | "regex_fallback" | "regex";

export const MAX_STRUCTURED_LIMIT = 1000;
export const MAX_SQL_LIMIT = 50_000;
export const MAX_TEXT_CHARS = 4000;
/** The last millisecond a window may name (9999-12-31, as the search clamps it). */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const clampMs = (ms: number) => Math.min(LAST_MS, Math.max(0, Math.trunc(ms)));

export interface McpRequest {
  query_text: string;
  mode?: McpMode | undefined;
  parser?: McpParser | undefined;
  limit?: number | undefined;
  timestamp?: { from?: number | undefined; to?: number | undefined } | undefined;
  now_utc_unix_ms?: number | undefined;
  /** The tool fixes the mode (svc_search_transactions, svc_query_sql): mcp.mode does not override it. */
  fixedMode?: boolean | undefined;
}

export interface ApiPayload {
  filter: Record<string, string | number>;
  param: { limit: number };
  timestamp: { from: number; to: number };
}

export interface Rows {
  items: unknown[];
  keys: string[];
  total: number;
}

/** How the engine reads: the search service and the SQL service, in process or over HTTP. */
export interface McpBackend {
  search(payload: ApiPayload): Promise<Rows>;
  /** Runs checked SQL (the product's read-only guard runs again); empty rows while the table does not exist. */
  sql(sql: string, limit: number): Promise<Rows>;
}

export interface McpResult {
  mode: "structured" | "sql";
  /** false: no word of the question maps to a filter; nothing was searched (docs/MCP.md "Answers"). */
  understood: boolean;
  /** Words of the question that no filter used (filler words are not listed). */
  ignored: string[];
  /** "Understood: method INVITE, from user 1001, last 1 h · Ignored: 'please'". */
  summary: string;
  normalized_filters: NlFilters;
  api_payload: ApiPayload;
  generated_sql?: string;
  total: number;
  items: unknown[];
  keys: string[];
  parser: { used: ParserUsed; requested: McpParser; model: string | null; latency_ms: number | null; error?: string };
}

const bad = (field: string, message: string) =>
  new AppError("VALIDATION", `${field}: ${message}`, { details: { fields: [field] } });

export class McpEngine {
  readonly llm: LlmBridge;
  private readonly duration: Histogram<"parser" | "mode">;

  constructor(
    private readonly cfg: Config["mcp"],
    private readonly backend: McpBackend,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    this.llm = new LlmBridge(cfg.llm);
    this.duration = metrics.histogram(
      "svc_mcp_parser_duration_seconds",
      "Natural-language parsing (docs/MCP.md) by parser used (llm, regex, regex_fallback) and mode (structured, sql); the count series is the hit rate.",
      DURATION_BUCKETS_SECONDS,
      ["parser", "mode"],
    );
  }

  /** Structured or sql, from mcp.mode, the request's mode and the text (docs/MCP.md "Modes"). */
  modeFor(req: McpRequest): "structured" | "sql" {
    if (req.fixedMode && (req.mode === "structured" || req.mode === "sql")) return req.mode;
    if (this.cfg.mode === "structured" || this.cfg.mode === "sql") return this.cfg.mode;
    if (req.mode === "structured" || req.mode === "sql") return req.mode;
    return asksForSql(req.query_text) ? "sql" : "structured";
  }

  async query(req: McpRequest): Promise<McpResult> {
    const text = typeof req.query_text === "string" ? req.query_text : "";
    if (text.trim() === "") throw bad("query_text", 'a question is required (e.g. "INVITE from caller alice today")');
    if (text.length > MAX_TEXT_CHARS) throw bad("query_text", `at most ${MAX_TEXT_CHARS} characters`);
    if (isSqlStatement(text)) {
      // The text is SQL: refused in every mode. The validator says what is wrong with it; a statement it
      // would accept is refused as well, since SQL is only ever built from filters (docs/MCP.md "SQL validator").
      const v = validateMcpSql(withoutDirectives(text));
      throw new AppError(
        "SQL_FORBIDDEN",
        `query_text is a SQL statement, which is never run${v.ok ? "" : ` (${v.detail ?? v.reason})`}; ask in plain language (e.g. "show sql INVITE from caller alice today") or use POST /query`,
        {
          details: { reason: v.ok ? "raw_sql" : v.reason },
        },
      );
    }
    const mode = this.modeFor(req);
    const cap = mode === "sql" ? MAX_SQL_LIMIT : MAX_STRUCTURED_LIMIT;
    if (req.limit !== undefined && (!Number.isInteger(req.limit) || req.limit < 1))
      throw bad("limit", "expected a positive integer");
    const limit = Math.min(req.limit ?? (mode === "sql" ? this.cfg.sql_default_limit : this.cfg.default_limit), cap);
    const nowMs = req.now_utc_unix_ms ?? Date.now();
    if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs > LAST_MS)
      throw bad("now_utc_unix_ms", "expected epoch milliseconds between 1970 and 9999");

    const parsed = await this.parse(withoutDirectives(text), req.parser ?? "auto", nowMs, mode);
    const f = parsed.filters;
    const fromMs = clampMs(req.timestamp?.from ?? f.from_ms!);
    const toMs = clampMs(req.timestamp?.to ?? f.to_ms!);
    if (req.timestamp?.from !== undefined || req.timestamp?.to !== undefined) f.time_range_label = "custom";
    if (fromMs > toMs) throw bad("timestamp.from", "is after timestamp.to");
    f.from_ms = fromMs;
    f.to_ms = toMs;

    // REGISTER and the out-of-dialog methods (OPTIONS, MESSAGE, …) are stored apart from calls, responses by
    // their CSeq method (src/sip/routing.ts).
    const tables = new Set((f.method ?? f.cseq_method ?? "INVITE").split(";").map((m) => sipTableFor(m)));
    const eventType = mode === "structured" && tables.size === 1 ? [...tables][0]! : "call";
    const filter: Record<string, string | number> = { proto_type: 1, event_type: eventType };
    for (const k of FILTER_TEXT_KEYS) if (f[k] !== undefined) filter[k] = f[k]!;
    const api_payload: ApiPayload = { filter, param: { limit }, timestamp: { from: fromMs, to: toMs } };
    const timeDefault = parsed.timeDefault && req.timestamp?.from === undefined && req.timestamp?.to === undefined;
    const base = {
      normalized_filters: f,
      api_payload,
      parser: parsed.meta,
      understood: parsed.understood,
      ignored: parsed.ignored,
      summary: summaryOf(f, parsed.ignored, parsed.understood, timeDefault),
    };
    // Nothing understood: say so instead of listing the whole range (docs/MCP.md "Answers").
    if (!parsed.understood) return { mode, ...base, total: 0, items: [], keys: [] };
    if (mode === "structured") return { mode, ...base, ...(await this.backend.search(api_payload)) };

    const sql = generateSql(f, { fromMs, toMs }, limit);
    const v = validateMcpSql(sql);
    // A value the validator refuses (a Call-ID with `;`) ends here, before the SQL service.
    if (!v.ok)
      throw new AppError("SQL_FORBIDDEN", `the generated SQL was refused by the validator: ${v.detail ?? v.reason}`, {
        details: { reason: v.reason },
      });
    return { mode, ...base, generated_sql: sql, ...(await this.backend.sql(sql, limit)) };
  }

  private async parse(text: string, requested: McpParser, nowMs: number, mode: "structured" | "sql") {
    if (requested !== "auto" && requested !== "llm" && requested !== "regex")
      throw bad("parser", "one of auto, llm, regex");
    const t0 = performance.now();
    const reading = understand(text, nowMs);
    const regex = reading.filters;
    const done = (
      used: ParserUsed,
      filters: NlFilters,
      extra: { model?: string; latency?: number; error?: string; modelSaid?: boolean } = {},
    ) => {
      this.duration.observe((performance.now() - t0) / 1000, { parser: used, mode });
      const meta: McpResult["parser"] = {
        used,
        requested,
        model: extra.model ?? null,
        latency_ms: extra.latency ?? null,
      };
      if (extra.error !== undefined) meta.error = extra.error;
      // The model's members count as understood; `ignored` stays the regex parser's (docs/MCP.md "Answers").
      const understood = reading.understood || extra.modelSaid === true;
      const timeDefault =
        reading.timeDefault && filters.time_range_label === regex.time_range_label && filters.from_ms === regex.from_ms;
      return { filters, meta, understood, ignored: reading.ignored, timeDefault };
    };
    if (requested === "regex" || (requested === "auto" && !this.llm.enabled)) return done("regex", regex);
    if (requested === "llm" && !this.llm.enabled) {
      throw new AppError(
        "DEPENDENCY_FAILED",
        `parser llm: the language-model bridge is disabled (${this.cfg.llm.enable ? "mcp.llm.provider is empty" : "mcp.llm.enable is false"}); use parser auto or regex`,
        { details: { fields: ["parser"] } },
      );
    }
    try {
      const answer = await this.llm.parse(text, nowMs);
      const model = answer.filters;
      // A label without a range (`today`) gets its range from the same words the regex parser knows.
      if (model.from_ms === undefined && model.time_range_label)
        Object.assign(model, timeRange(model.time_range_label.replaceAll("_", " "), nowMs) ?? {});
      const modelSaid = FILTER_TEXT_KEYS.some((k) => model[k] !== undefined) || model.from_ms !== undefined;
      return done("llm", mergeFilters(model, regex), { model: answer.model, latency: answer.latencyMs, modelSaid });
    } catch (e) {
      if (!(e instanceof LlmError)) throw e;
      if (requested === "llm")
        throw new AppError(e.kind === "busy" ? "RATE_LIMITED" : "BAD_GATEWAY", `parser llm: ${e.message}`, {
          details: { llm_error: e.kind },
        });
      this.logger.warn("language model failed; the regex parser answers", { llm_error: e.kind, detail: e.message });
      return done("regex_fallback", regex, { model: this.cfg.llm.model, error: e.message });
    }
  }
}
