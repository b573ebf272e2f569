/**
 * Store-and-forward to a central svc (docs/DEPLOY.md "N edges and a central writer"): the HEP
 * packets every hand-over brings, and the line-protocol and OTLP requests the receivers accepted,
 * are appended to forward logs (forward-log.ts; one per kind, `<state>/forward/` for HEP and its
 * subdirectories `line_protocol/` and `otlp/`), each sent in order by its own loop
 * (forward-stream.ts). Also the lossy live mirror of HEP packets (mirror.ts).
 */
import { join } from "node:path";
import type { Config } from "../../config/index.ts";
import { clientTlsOptions, loadClientTls, type Logger, type MetricsRegistry, type Module } from "../../core/index.ts";
import { ForwardLog, senderId } from "./forward-log.ts";
import { FORWARD_KINDS, ForwardStream, type ForwardKind } from "./forward-stream.ts";
import { HepMirror } from "./mirror.ts";
import { RawBatch } from "./raw-batch.ts";
import { encodeLpRecord, encodeOtlpRecord, type LpRecord, type OtlpRecord } from "./records.ts";

export { FORWARD_HEADERS, FORWARD_PATH, FORWARD_KINDS, type ForwardKind } from "./forward-stream.ts";

export type ForwardState = "ok" | "lagging" | "down";

export interface ForwardHealth {
  state: ForwardState;
  lagSec: number;
  backlogBytes: number;
  backlogPackets: number;
  droppedPackets: number;
  output?: string;
}

/** The packets of a hand-over go here (main thread): the forward log and the mirror. */
export interface RawSink {
  acceptChunk(bytes: Uint8Array, count: number): void;
  /** One packet on the main thread (ingest without threads, HEP over HTTP without a running thread). */
  acceptPacket(p: Uint8Array): void;
}

export class HepRelay implements Module, RawSink {
  readonly name = "hep-relay";
  private readonly streams = new Map<ForwardKind, ForwardStream>();
  private mirror: HepMirror | undefined;
  private readonly pending: RawBatch;
  private timer: ReturnType<typeof setInterval> | undefined;
  private dropped = 0;
  private readonly sender: string | undefined;
  /** The `tls` option of the POST: the central's CA and this edge's client certificate. */
  private readonly tls: ReturnType<typeof clientTlsOptions> = {};
  private readonly m;

  constructor(
    private readonly cfg: Config["ingest"],
    private readonly dir: string,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    const f = cfg.forward;
    this.m = {
      lag: metrics.gauge(
        "svc_forward_lag_seconds",
        "Age of the oldest record (HEP packet, line-protocol or OTLP request) not yet acknowledged by the central (ingest.forward), seconds; 0 when none waits.",
      ),
      backlogBytes: metrics.gauge(
        "svc_forward_backlog_bytes",
        "Bytes of the forward logs on disk (ingest.forward.max_backlog_bytes caps each).",
      ),
      backlogPackets: metrics.gauge(
        "svc_forward_backlog_packets",
        "Records (HEP packets, line-protocol and OTLP requests) in the forward logs not yet acknowledged by the central.",
      ),
      dropped: metrics.counter(
        "svc_forward_dropped_packets_total",
        "Records never forwarded, per reason: backlog_cap (the oldest segment deleted at ingest.forward.max_backlog_bytes), handover_full (over 64 MiB in one hand-over).",
        ["reason"],
      ),
      sent: metrics.counter(
        "svc_forward_sent_packets_total",
        "Records (HEP packets, line-protocol and OTLP requests) the central acknowledged.",
      ),
      sentBytes: metrics.counter("svc_forward_sent_bytes_total", "Compressed bytes of acknowledged forward batches."),
      retries: metrics.counter(
        "svc_forward_retries_total",
        "Forward batches that failed (connection, time-out, non-200) and are sent again after a back-off.",
      ),
      up: metrics.gauge("svc_forward_up", "1 while the last forward attempt reached the central, else 0."),
      mirrorSent: metrics.counter(
        "svc_mirror_sent_total",
        "HEP packets copied to a mirror destination (ingest.mirror.destinations).",
        ["destination"],
      ),
      mirrorDropped: metrics.counter(
        "svc_mirror_dropped_total",
        "HEP packets not copied to a mirror destination (socket full, queue_bytes reached, not connected).",
        ["destination"],
      ),
    };
    this.m.dropped.inc({ reason: "backlog_cap" }, 0);
    this.m.dropped.inc({ reason: "handover_full" }, 0);
    this.pending = new RawBatch(64 << 20, () => this.m.dropped.inc({ reason: "handover_full" }));
    if (f.enable) {
      this.sender = senderId(dir);
      this.tls = clientTlsOptions(loadClientTls(f, "ingest.forward"));
    }
  }

  /** Whether HEP packets are wanted here: forwarded (ingest.forward.hep) or mirrored; else the ingest threads need not hand them over. */
  takesHep(): boolean {
    const f = this.cfg.forward;
    return (f.enable && f.hep) || this.cfg.mirror.destinations.length > 0;
  }

  /** This edge's sender id (undefined when forwarding is off). */
  senderId(): string | undefined {
    return this.sender;
  }

  async start(): Promise<void> {
    const f = this.cfg.forward;
    if (f.enable) {
      // A kind switched off (ingest.forward.hep, line_protocol, otlp) keeps no log and sends nothing.
      for (const kind of FORWARD_KINDS.filter((k) => f[k])) {
        const log = new ForwardLog({
          dir: kind === "hep" ? this.dir : join(this.dir, kind),
          maxBacklogBytes: f.max_backlog_bytes,
          segmentBytes: f.segment_bytes,
          onDrop: (n) => {
            this.dropped += n;
            this.m.dropped.inc({ reason: "backlog_cap" }, n);
          },
        });
        const stream = new ForwardStream(kind, log, f, this.sender!, this.tls, this.m, this.logger, () =>
          this.publish(),
        );
        this.streams.set(kind, stream);
        stream.start();
      }
      const hep = this.streams.get("hep")?.log;
      this.logger.info("forwarding to the central", {
        url: f.url,
        sender: this.sender,
        kinds: [...this.streams.keys()].join(","),
        ...(hep ? { next_seq: hep.next(), acked: hep.acked() } : {}),
      });
    }
    if (this.cfg.mirror.destinations.length > 0) {
      this.mirror = new HepMirror(
        this.cfg.mirror.destinations,
        this.cfg.mirror.queue_bytes,
        { sent: this.m.mirrorSent, dropped: this.m.mirrorDropped },
        this.logger,
      );
      await this.mirror.start();
    }
    this.timer = setInterval(() => {
      this.flushPending();
      this.publish();
    }, 100);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.flushPending();
    await Promise.all([...this.streams.values()].map((s) => s.stop()));
    this.mirror?.stop();
  }

  acceptChunk(bytes: Uint8Array, count: number): void {
    this.streams.get("hep")?.append(bytes, count);
    this.mirror?.sendChunk(bytes);
  }

  acceptPacket(p: Uint8Array): void {
    this.pending.add(p);
  }

  /**
   * A line-protocol request whose rows were just handed to the lake (called before its spool wait,
   * as HEP packets are logged in the step that hands their rows over: docs/DEPLOY.md "Forward log").
   */
  acceptLineProtocol(r: LpRecord): void {
    if (this.streams.has("line_protocol")) this.appendRecord("line_protocol", encodeLpRecord(r));
  }

  /** An OTLP export whose rows were just handed to the lake (as acceptLineProtocol). */
  acceptOtlp(r: OtlpRecord): void {
    if (this.streams.has("otlp")) this.appendRecord("otlp", encodeOtlpRecord(r));
  }

  private appendRecord(kind: ForwardKind, record: Uint8Array): void {
    const s = this.streams.get(kind);
    if (!s) return;
    const framed = new Uint8Array(4 + record.length);
    new DataView(framed.buffer).setUint32(0, record.length);
    framed.set(record, 4);
    s.append(framed, 1);
  }

  private flushPending(): void {
    const c = this.pending.seal();
    if (c) this.acceptChunk(new Uint8Array(c.buffer, 0, c.length), c.count);
  }

  private publish(): void {
    if (this.streams.size === 0) return;
    let lag = 0;
    let bytes = 0;
    let packets = 0;
    for (const s of this.streams.values()) {
      lag = Math.max(lag, s.log.lagSec());
      bytes += s.log.backlogBytes();
      packets += s.log.backlogPackets();
    }
    this.m.lag.set(lag);
    this.m.backlogBytes.set(bytes);
    this.m.backlogPackets.set(packets);
  }

  health(): ForwardHealth | undefined {
    if (this.streams.size === 0) return undefined;
    let lagSec = 0;
    let backlogBytes = 0;
    let backlogPackets = 0;
    let down: ForwardStream | undefined;
    for (const s of this.streams.values()) {
      lagSec = Math.max(lagSec, s.log.lagSec());
      backlogBytes += s.log.backlogBytes();
      backlogPackets += s.log.backlogPackets();
      if (s.failures > 0 && (!down || s.failures > down.failures)) down = s;
    }
    const state: ForwardState = down ? "down" : lagSec > this.cfg.forward.lag_warn_sec ? "lagging" : "ok";
    const output = down
      ? `the central does not take forward batches (${down.failures} failed attempts: ${down.lastError}); records wait in the forward log`
      : state === "lagging"
        ? `the oldest unsent record is ${Math.round(lagSec)} s old`
        : undefined;
    return { state, lagSec, backlogBytes, backlogPackets, droppedPackets: this.dropped, ...(output ? { output } : {}) };
  }
}
