/**
 * OTLP log export (docs/LOADGEN.md "OTLP logs"): one log record per ended call (and one when an
 * engine starts and stops), batched and POSTed as OTLP/HTTP JSON (`ExportLogsServiceRequest`,
 * opentelemetry-proto logs/v1) to `log_otel_endpoint`, the full URL such as
 * http://collector:4318/v1/logs, or with `log_otel_proto` grpc protobuf-encoded to host:port
 * (otel-grpc.ts). `log_otel_insecure` skips certificate checks for https, plaintext for gRPC.
 */

export interface LogRecordInput {
  severity: "INFO" | "WARN";
  body: string;
  attributes: Record<string, string | number | boolean>;
}

export interface OtelLogExporter {
  emit(r: LogRecordInput): void;
  /** Sends what is queued; resolves when the collector answered (or failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Batches the collector did not accept (status or network error). */
  readonly errors: number;
}

import { grpcLogSender } from "./otel-grpc.ts";

const SEVERITY = { INFO: 9, WARN: 13 } as const;
const BATCH = 512;

const anyValue = (v: string | number | boolean) =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "boolean"
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: String(v) }
        : { doubleValue: v };

export function createOtelLogExporter(opts: {
  endpoint: string;
  proto: string;
  insecure: boolean;
  engineId: string;
}): OtelLogExporter {
  const grpcSender = opts.proto === "grpc" ? grpcLogSender(opts.endpoint, opts.insecure) : undefined;
  let queue: unknown[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: Promise<void> = Promise.resolve();
  const state = { errors: 0 };
  const send = (records: unknown[]) => {
    const body = {
      resourceLogs: [
        {
          resource: {
            attributes: [
              { key: "service.name", value: { stringValue: "loadgen" } },
              { key: "loadgen.engine", value: { stringValue: opts.engineId } },
            ],
          },
          scopeLogs: [{ scope: { name: "svc-loadgen" }, logRecords: records }],
        },
      ],
    };
    if (grpcSender)
      return grpcSender.send(body).then((ok) => {
        if (!ok) state.errors++;
      });
    return fetch(opts.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      // A collector that never answers must not hold the end of the run for long.
      signal: AbortSignal.timeout(10_000),
      ...(opts.insecure ? { tls: { rejectUnauthorized: false } } : {}),
    }).then(
      (r) => {
        if (!r.ok) state.errors++;
      },
      () => {
        state.errors++;
      },
    );
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queue.length > 0) {
      const batch = queue;
      queue = [];
      inflight = inflight.then(() => send(batch));
    }
    return inflight;
  };
  return {
    get errors() {
      return state.errors;
    },
    emit(r) {
      const nowNs = `${BigInt(Date.now()) * 1_000_000n}`;
      queue.push({
        timeUnixNano: nowNs,
        observedTimeUnixNano: nowNs,
        severityNumber: SEVERITY[r.severity],
        severityText: r.severity,
        body: { stringValue: r.body },
        attributes: Object.entries(r.attributes).map(([key, v]) => ({ key, value: anyValue(v) })),
      });
      if (queue.length >= BATCH) void flush();
      else timer ??= setTimeout(() => void flush(), 1000);
    },
    flush,
    close: async () => {
      await flush();
      grpcSender?.close();
    },
  };
}

/** The records an engine sends (docs/LOADGEN.md "OTLP logs"): started, each ended call, stopped. */
export class EngineLog {
  private constructor(
    private readonly otel: OtelLogExporter,
    private readonly scenario: () => string,
  ) {}

  /** The engine's log when `log_otel_endpoint` is set, which says the engine started. */
  static open(
    o: { log_otel_endpoint: string; log_otel_proto: string; log_otel_insecure: boolean },
    engineId: string,
    scenario: () => string,
    mode: string,
  ): EngineLog | undefined {
    if (!o.log_otel_endpoint) return undefined;
    const log = new EngineLog(
      createOtelLogExporter({
        endpoint: o.log_otel_endpoint,
        proto: o.log_otel_proto,
        insecure: o.log_otel_insecure,
        engineId,
      }),
      scenario,
    );
    log.otel.emit({
      severity: "INFO",
      body: "engine started",
      attributes: { "loadgen.scenario": scenario(), "loadgen.mode": mode },
    });
    return log;
  }

  /** Batches the collector did not accept. */
  get errors(): number {
    return this.otel.errors;
  }

  callEnded(callId: string, ok: boolean, reason: string): void {
    this.otel.emit({
      severity: ok ? "INFO" : "WARN",
      body: ok ? "call successful" : `call failed: ${reason}`,
      attributes: {
        "sip.call_id": callId,
        "loadgen.scenario": this.scenario(),
        "loadgen.result": ok ? "successful" : "failed",
        ...(ok ? {} : { "loadgen.reason": reason }),
      },
    });
  }

  /** Says the engine stopped, with its calls' counts, and sends what is queued. */
  async stopped(s: { calls_successful: number; calls_failed: number }): Promise<void> {
    this.otel.emit({
      severity: "INFO",
      body: "engine stopped",
      attributes: {
        "loadgen.scenario": this.scenario(),
        calls_successful: s.calls_successful,
        calls_failed: s.calls_failed,
      },
    });
    await this.otel.close();
  }
}
