/**
 * One OTLP export, transport aside (docs/OTLP.md "What is kept, and when it is answered"): decode,
 * check the lake has room for every item, write the rows, and answer only once they are in the
 * spool (a success survives a kill -9, as for HEP and line protocol: docs/ARCHITECTURE.md "Write
 * path").
 */
import { errorMessage, type Counter, type Gauge, type Logger, type MetricsRegistry } from "../../core/index.ts";
import type { LpSink } from "../lineproto/index.ts";
import { decodeLimited, limitJsonAttributes } from "./attribute-limit.ts";
import { MESSAGES } from "./proto.ts";
import { countItems, writeRows } from "./rows.ts";
import { otlpTableDefs, otlpTableKey, type OtlpSignal } from "./tables.ts";
import { checkWire } from "./wire.ts";

/** What the receiver needs from the lake (the Lake has it; ingest never imports the lake). */
export type OtlpSink = Pick<LpSink, "defineTable" | "row" | "backlog" | "spoolRoom" | "whenSpooled">;

export type OtlpEncoding = "protobuf" | "json";

/**
 * `ok` (maybe with rejected items: the partial success), `bad_request` (the body does not decode:
 * 400 / INVALID_ARGUMENT), `unavailable` (the lake cannot take the request now: 503 / UNAVAILABLE,
 * the client retries), `server_error` (our fault: 500 / INTERNAL).
 */
export type OtlpOutcome = "ok" | "bad_request" | "unavailable" | "server_error";

export interface OtlpResult {
  outcome: OtlpOutcome;
  written: number;
  rejected: number;
  /** The partial success's error_message, or the error's message. */
  message: string;
}

export interface OtlpMetrics {
  requests: Counter<"transport" | "signal" | "outcome">;
  items: Counter<"signal">;
  rejected: Counter<"signal" | "reason">;
  droppedAttributes: Counter<"signal">;
  inflight: Gauge;
}

/** A decoded request and the attributes over `ingest.otlp.max_attributes` dropped from it. */
export interface OtlpDecoded {
  request: unknown;
  droppedAttributes: number;
}

/** `outcome` label values (docs/OTLP.md "Metrics"). */
export type OtlpRequestOutcome =
  | "ok"
  | "partial"
  | "bad_request"
  | "too_large"
  | "throttled"
  | "unsupported"
  | "unavailable"
  | "server_error";

export function otlpMetrics(reg: MetricsRegistry): OtlpMetrics {
  const m: OtlpMetrics = {
    requests: reg.counter(
      "svc_otlp_requests_total",
      "OTLP export requests, per transport (http, grpc), signal and outcome (ok, partial, bad_request, too_large, throttled, unsupported, unavailable, server_error).",
      ["transport", "signal", "outcome"],
    ),
    items: reg.counter(
      "svc_otlp_items_ingested_total",
      "OTLP spans, data points and log records written to the lake, per signal.",
      ["signal"],
    ),
    rejected: reg.counter(
      "svc_otlp_items_rejected_total",
      "OTLP items not stored, per signal and reason (invalid: reported to the client as partial success; unavailable: the lake was full or stopping, the client was told to retry; lost: the spool write failed).",
      ["signal", "reason"],
    ),
    droppedAttributes: reg.counter(
      "svc_otlp_attributes_dropped_total",
      "OTLP attributes over ingest.otlp.max_attributes dropped from their item (resource, scope, span, event, link, log record, data point), per signal; the item is stored with the rest.",
      ["signal"],
    ),
    inflight: reg.gauge(
      "svc_otlp_inflight_bytes",
      "Bytes of OTLP requests (compressed and inflated) being read or decoded now, both transports; at most about ingest.otlp.max_inflight_bytes.",
    ),
  };
  m.inflight.set(0);
  for (const signal of ["traces", "metrics", "logs"]) {
    m.items.inc({ signal }, 0);
    m.droppedAttributes.inc({ signal }, 0);
    for (const reason of ["invalid", "unavailable", "lost"]) m.rejected.inc({ signal, reason }, 0);
  }
  return m;
}

export class OtlpIngest {
  constructor(
    private readonly sink: OtlpSink,
    private readonly metrics: OtlpMetrics,
    private readonly logger: Logger,
    /** The lake's `max_buffered_rows`: a request that does not fit is refused whole (503), never cut. */
    private readonly maxBufferedRows?: number,
    /** `ingest.otlp.max_attributes`: attributes kept per item (docs/OTLP.md "Limits"). */
    private readonly maxAttributes = Number.POSITIVE_INFINITY,
    /**
     * An export whose rows were handed to the lake, called before the spool wait: the edge's
     * forward log takes it (docs/DEPLOY.md "Forward log").
     */
    private readonly onWritten?: (signal: OtlpSignal, body: Uint8Array, encoding: OtlpEncoding, nowUs: number) => void,
  ) {}

  /** Defines the three tables (idempotent; the lake keeps what the catalog has). */
  async start(): Promise<void> {
    for (const def of otlpTableDefs()) await this.sink.defineTable(def);
  }

  /**
   * Decodes a body: the request with at most `max_attributes` attributes per item, or why it is not
   * a valid request of this signal (a 400).
   */
  decode(signal: OtlpSignal, body: Uint8Array, encoding: OtlpEncoding): OtlpDecoded | { error: string } {
    if (encoding === "protobuf") {
      const type = MESSAGES[signal].request;
      const wrong = checkWire(type, body);
      if (wrong) return { error: `the body is not a valid protobuf ${type.name}: ${wrong}` };
      try {
        const { message, dropped } = decodeLimited(type, body, this.maxAttributes);
        return { request: message, droppedAttributes: dropped };
      } catch (e) {
        return { error: `the body is not a valid protobuf ${type.name}: ${errorMessage(e)}` };
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch (e) {
      return { error: `the body is not valid JSON: ${errorMessage(e)}` };
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      return { error: `the body must be a JSON object (an OTLP/JSON ${MESSAGES[signal].request.name})` };
    const list = (parsed as Record<string, unknown>)[MESSAGES[signal].resourceField];
    if (list !== undefined && !Array.isArray(list))
      return { error: `${MESSAGES[signal].resourceField} must be an array` };
    return {
      request: parsed,
      droppedAttributes: Number.isFinite(this.maxAttributes)
        ? limitJsonAttributes(signal, parsed, this.maxAttributes)
        : 0,
    };
  }

  /**
   * `body`: the (inflated) body, its size close to what its rows take in the spool. `nowUs`: the
   * receive time (items without a time get it); a forwarded export brings the edge's.
   */
  async export(
    signal: OtlpSignal,
    decoded: OtlpDecoded,
    encoding: OtlpEncoding,
    body: Uint8Array,
    nowUs = Date.now() * 1000,
  ): Promise<OtlpResult> {
    const bytes = body.byteLength;
    const { request, droppedAttributes } = decoded;
    const items = countItems(signal, request);
    if (items === 0) return { outcome: "ok", written: 0, rejected: 0, message: "" };
    const full = this.wouldOverflow(items, bytes);
    if (full) {
      this.metrics.rejected.inc({ signal, reason: "unavailable" }, items);
      return { outcome: "unavailable", written: 0, rejected: 0, message: full };
    }
    let counts;
    try {
      counts = writeRows(signal, request, { row: (k) => this.sink.row(k), nowUs, protobuf: encoding === "protobuf" });
    } catch (e) {
      // A broken invariant (row layout): logged; the client learns only that it was our fault.
      this.logger.error("OTLP rows could not be built", { signal, error: errorMessage(e) });
      return { outcome: "server_error", written: 0, rejected: 0, message: "internal error; see the appliance log" };
    }
    if (counts.written > 0) this.onWritten?.(signal, body, encoding, nowUs);
    if (counts.written > 0 && this.sink.whenSpooled && !(await this.sink.whenSpooled(otlpTableKey(signal)))) {
      this.metrics.rejected.inc({ signal, reason: "lost" }, counts.written);
      return {
        outcome: "unavailable",
        written: 0,
        rejected: 0,
        message: "the lake could not write the items to disk (see the appliance log and /health); retry later",
      };
    }
    this.metrics.items.inc({ signal }, counts.written);
    if (counts.rejected > 0) this.metrics.rejected.inc({ signal, reason: "invalid" }, counts.rejected);
    if (counts.refused > 0) {
      this.metrics.rejected.inc({ signal, reason: "unavailable" }, counts.refused);
      // Nothing written: the client may retry the whole request without duplicating a row.
      if (counts.written === 0)
        return {
          outcome: "unavailable",
          written: 0,
          rejected: 0,
          message: "the lake is stopping or its write buffer is full; retry later",
        };
    }
    const reasons = [...counts.reasons];
    if (counts.refused > 0)
      reasons.push(`${counts.refused} item(s) refused by the lake (write buffer full or stopping)`);
    if (droppedAttributes > 0 && counts.written > 0) {
      // Stored items keep their first max_attributes attributes; dropped_attributes_count says how many went.
      this.metrics.droppedAttributes.inc({ signal }, droppedAttributes);
      reasons.push(
        `${droppedAttributes} attribute(s) over ingest.otlp.max_attributes (${this.maxAttributes} per item) dropped; dropped_attributes_count counts them per item`,
      );
    }
    return {
      outcome: "ok",
      written: counts.written,
      rejected: counts.rejected + counts.refused,
      message: reasons.join("; "),
    };
  }

  private wouldOverflow(items: number, bytes: number): string | undefined {
    if (bytes > (this.sink.spoolRoom?.() ?? Number.POSITIVE_INFINITY))
      return "the lake's disk is nearly full (storage.lakehouse.reserve_free_bytes); nothing was written, retry later";
    const max = this.maxBufferedRows;
    if (max === undefined) return undefined;
    const waiting = this.sink.backlog();
    if (waiting + items <= max) return undefined;
    return `the lake's write buffer is full (${waiting} of ${max} rows waiting for Parquet); nothing was written, retry later`;
  }
}
