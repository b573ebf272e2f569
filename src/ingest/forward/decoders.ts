/**
 * The central's decoding of forwarded line-protocol and OTLP records (docs/DEPLOY.md "Forward
 * protocol"): the same code as the receivers (LpIngest, OtlpIngest), with the edge's receive time,
 * into the sink the forward receiver gives (its held rows). Configured by the central's own
 * `ingest.line_protocol` (table prefix, default database, limits) and `ingest.otlp.max_attributes`.
 * The OTLP code (protobuf schema, gRPC) is loaded at the first OTLP record, not at start: a central
 * that takes no OTLP never loads it (docs/ARCHITECTURE.md "Start-up").
 */
import type { Config } from "../../config/index.ts";
import type { Logger, MetricsRegistry } from "../../core/index.ts";
import { LpIngest, lpReceiverMetrics, type LpPrecision, type LpTableSink } from "../lineproto/index.ts";
import type { OtlpIngest, OtlpSignal } from "../otlp/index.ts";
import { decodeLpRecord, decodeOtlpRecord } from "./records.ts";

/** `taken` (stored, or refused for good: acknowledged), `unavailable` (the buffer is full: sent again), or a record that does not decode. */
export type RecordOutcome =
  | { kind: "taken"; written: number; problem?: string }
  | { kind: "unavailable" }
  | { kind: "malformed" };

export interface ForwardDecoders {
  lineProtocol(record: Uint8Array): Promise<RecordOutcome>;
  otlp(record: Uint8Array): Promise<RecordOutcome>;
}

export function createForwardDecoders(
  cfg: Config["ingest"],
  sink: LpTableSink,
  logger: Logger,
  metrics: MetricsRegistry,
  maxBufferedRows: number,
): ForwardDecoders {
  const lp = cfg.line_protocol;
  const lpIngest = new LpIngest(
    sink,
    {
      defaultDb: lp.default_db,
      tablePrefix: lp.table_prefix,
      allowHepSipCall: lp.allow_hep_sip_call,
      maxTables: lp.max_tables,
      maxColumns: lp.max_columns,
      maxBufferedRows,
    },
    lpReceiverMetrics(metrics),
    logger,
  );
  // The OTLP ingest with its tables defined, made at the first OTLP record (again after a failure).
  let otlpReady: Promise<OtlpIngest> | undefined;
  const loadOtlpIngest = async (): Promise<OtlpIngest> => {
    const m = await import("../otlp/index.ts");
    const ingest = new m.OtlpIngest(sink, m.otlpMetrics(metrics), logger, maxBufferedRows, cfg.otlp.max_attributes);
    await ingest.start();
    return ingest;
  };
  return {
    async lineProtocol(record) {
      const r = decodeLpRecord(record);
      if (!r) return { kind: "malformed" };
      const w = await lpIngest.write({
        body: r.body,
        database: r.database,
        precision: r.precision as LpPrecision,
        nowNs: r.nowNs,
      });
      if (w.outcome === "unavailable" && w.written === 0) return { kind: "unavailable" };
      return { kind: "taken", written: w.written, ...(w.outcome === "ok" ? {} : { problem: w.outcome }) };
    },
    async otlp(record) {
      const r = decodeOtlpRecord(record);
      if (!r) return { kind: "malformed" };
      otlpReady ??= loadOtlpIngest().catch((e: unknown) => {
        otlpReady = undefined;
        throw e;
      });
      const otlp = await otlpReady;
      const signal = r.signal as OtlpSignal;
      const encoding = r.encoding as "protobuf" | "json";
      const decoded = otlp.decode(signal, r.body, encoding);
      if ("error" in decoded) return { kind: "taken", written: 0, problem: "bad_request" };
      const x = await otlp.export(signal, decoded, encoding, r.body, r.nowUs);
      if (x.outcome === "unavailable" && x.written === 0) return { kind: "unavailable" };
      return { kind: "taken", written: x.written, ...(x.outcome === "ok" ? {} : { problem: x.outcome }) };
    },
  };
}
