/**
 * Store-and-forward to a central svc (docs/DEPLOY.md "N edges and a central writer"): the packets
 * every hand-over brings are appended to the forward log (forward-log.ts), and one loop sends the
 * log in order, a bounded batch per POST <url>/api/v1/forward (gzip body of length-prefixed
 * packets, headers with the sender id and the batch's first and last seq, the central's node token
 * as Bearer). The central answers with the last seq it holds durably; only then the log moves on,
 * so a kill -9 of either side re-sends at most the unacknowledged batch and the central drops the
 * replayed part. Failures back off exponentially with jitter (0.25 s to 10 s).
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Config } from "../../config/index.ts";
import { clientTlsOptions, errorMessage, loadClientTls, type Logger, type MetricsRegistry, type Module } from "../../core/index.ts";
import { ForwardLog, senderId, type ForwardBatch } from "./forward-log.ts";
import { HepMirror } from "./mirror.ts";
import { RawBatch } from "./raw-batch.ts";

const gzipAsync = promisify(gzip);

/** Headers of a forward batch (docs/DEPLOY.md "Forward protocol"). */
export const FORWARD_HEADERS = { sender: "x-svc-forward-sender", first: "x-svc-forward-first", last: "x-svc-forward-last", floor: "x-svc-forward-floor" } as const;
export const FORWARD_PATH = "/api/v1/forward";

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
  private log: ForwardLog | undefined;
  private mirror: HepMirror | undefined;
  private readonly pending: RawBatch;
  private timer: ReturnType<typeof setInterval> | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private abort: AbortController | undefined;
  private failures = 0;
  private lastError = "";
  private dropped = 0;
  private polledAtMs = 0;
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
      lag: metrics.gauge("svc_forward_lag_seconds", "Age of the oldest HEP packet not yet acknowledged by the central (ingest.forward), seconds; 0 when none waits."),
      backlogBytes: metrics.gauge("svc_forward_backlog_bytes", "Bytes of the forward log on disk (ingest.forward.max_backlog_bytes caps it)."),
      backlogPackets: metrics.gauge("svc_forward_backlog_packets", "HEP packets in the forward log not yet acknowledged by the central."),
      dropped: metrics.counter(
        "svc_forward_dropped_packets_total",
        "HEP packets never forwarded, per reason: backlog_cap (the oldest segment deleted at ingest.forward.max_backlog_bytes), handover_full (over 64 MiB in one hand-over).",
        ["reason"],
      ),
      sent: metrics.counter("svc_forward_sent_packets_total", "HEP packets the central acknowledged."),
      sentBytes: metrics.counter("svc_forward_sent_bytes_total", "Compressed bytes of acknowledged forward batches."),
      retries: metrics.counter("svc_forward_retries_total", "Forward batches that failed (connection, time-out, non-200) and are sent again after a back-off."),
      up: metrics.gauge("svc_forward_up", "1 while the last forward attempt reached the central, else 0."),
      mirrorSent: metrics.counter("svc_mirror_sent_total", "HEP packets copied to a mirror destination (ingest.mirror.destinations).", ["destination"]),
      mirrorDropped: metrics.counter("svc_mirror_dropped_total", "HEP packets not copied to a mirror destination (socket full, queue_bytes reached, not connected).", ["destination"]),
    };
    this.m.dropped.inc({ reason: "backlog_cap" }, 0);
    this.m.dropped.inc({ reason: "handover_full" }, 0);
    this.pending = new RawBatch(64 << 20, () => this.m.dropped.inc({ reason: "handover_full" }));
    if (f.enable) {
      this.sender = senderId(dir);
      this.tls = clientTlsOptions(loadClientTls(f, "ingest.forward"));
    }
  }

  /** This edge's sender id (undefined when forwarding is off). */
  senderId(): string | undefined {
    return this.sender;
  }

  async start(): Promise<void> {
    const f = this.cfg.forward;
    if (f.enable) {
      this.log = new ForwardLog({
        dir: this.dir,
        maxBacklogBytes: f.max_backlog_bytes,
        segmentBytes: f.segment_bytes,
        onDrop: (n) => {
          this.dropped += n;
          this.m.dropped.inc({ reason: "backlog_cap" }, n);
        },
      });
      this.running = true;
      this.loop = this.sendLoop();
      this.logger.info("forwarding HEP to the central", { url: f.url, sender: this.sender, next_seq: this.log.next(), acked: this.log.acked() });
    }
    if (this.cfg.mirror.destinations.length > 0) {
      this.mirror = new HepMirror(this.cfg.mirror.destinations, this.cfg.mirror.queue_bytes, { sent: this.m.mirrorSent, dropped: this.m.mirrorDropped }, this.logger);
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
    this.running = false;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
    this.log?.close();
    this.mirror?.stop();
  }

  acceptChunk(bytes: Uint8Array, count: number): void {
    this.log?.append(bytes, count);
    this.mirror?.sendChunk(bytes);
    this.wake?.();
  }

  acceptPacket(p: Uint8Array): void {
    this.pending.add(p);
  }

  private flushPending(): void {
    const c = this.pending.seal();
    if (c) this.acceptChunk(new Uint8Array(c.buffer, 0, c.length), c.count);
  }

  private publish(): void {
    if (!this.log) return;
    this.m.lag.set(this.log.lagSec());
    this.m.backlogBytes.set(this.log.backlogBytes());
    this.m.backlogPackets.set(this.log.backlogPackets());
  }

  health(): ForwardHealth | undefined {
    const log = this.log;
    if (!log) return undefined;
    const lagSec = log.lagSec();
    const state: ForwardState = this.failures > 0 ? "down" : lagSec > this.cfg.forward.lag_warn_sec ? "lagging" : "ok";
    const output =
      state === "down"
        ? `the central does not take forward batches (${this.failures} failed attempts: ${this.lastError}); packets wait in the forward log`
        : state === "lagging"
          ? `the oldest unsent packet is ${Math.round(lagSec)} s old`
          : undefined;
    return { state, lagSec, backlogBytes: log.backlogBytes(), backlogPackets: log.backlogPackets(), droppedPackets: this.dropped, ...(output ? { output } : {}) };
  }

  private async sendLoop(): Promise<void> {
    const f = this.cfg.forward;
    const url = `${f.url.replace(/\/+$/, "")}${FORWARD_PATH}`;
    while (this.running) {
      const b = this.log!.read(f.batch_packets, f.batch_bytes);
      if (!b) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 1000);
          this.wake = () => {
            clearTimeout(t);
            this.wake = undefined;
            resolve();
          };
        });
        // Nothing to send, but the central holds packets it has not committed: ask it, at most once
        // a second, whether it did or whether it restarted and needs them again.
        if (this.running && this.log!.uncommitted() > 0 && Date.now() - this.polledAtMs >= 1000) {
          this.polledAtMs = Date.now();
          await this.askPosition(url).catch(() => {});
        }
        continue;
      }
      try {
        await this.sendBatch(url, b);
        this.failures = 0;
        this.m.up.set(1);
      } catch (e) {
        if (!this.running) break;
        this.failures++;
        this.lastError = errorMessage(e);
        this.m.retries.inc();
        this.m.up.set(0);
        if (this.failures === 1 || this.failures % 20 === 0) this.logger.warn("forward batch failed; retrying", { failures: this.failures, error: this.lastError, first: b.first, last: b.last });
        const backoff = Math.min(10_000, 250 * 2 ** Math.min(this.failures - 1, 6)) * (0.5 + Math.random() / 2);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, backoff);
          this.wake = () => {
            if (this.running) return; // new packets do not cut a back-off short
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = undefined;
      }
      this.publish();
    }
  }

  private async sendBatch(url: string, b: ForwardBatch): Promise<void> {
    const f = this.cfg.forward;
    const body = await gzipAsync(b.body, { level: 1 });
    this.abort = new AbortController();
    const timer = setTimeout(() => this.abort?.abort(), f.timeout_sec * 1000);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/octet-stream",
          "content-encoding": "gzip",
          [FORWARD_HEADERS.sender]: this.sender!,
          [FORWARD_HEADERS.first]: String(b.first),
          [FORWARD_HEADERS.last]: String(b.last),
          [FORWARD_HEADERS.floor]: String(this.log!.floor()),
          ...(f.token ? { authorization: `Bearer ${f.token}` } : {}),
        },
        body,
        signal: this.abort.signal,
        ...this.tls,
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      const { last, committed } = positions(text);
      this.log!.ack(b, last, committed);
      const taken = Math.max(0, Math.min(last, b.last) - b.first + 1);
      this.m.sent.inc(undefined, taken);
      if (taken > 0) this.m.sentBytes.inc(undefined, body.length);
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET the central's positions for this sender (docs/DEPLOY.md "Forward protocol"). */
  private async askPosition(url: string): Promise<void> {
    const res = await fetch(`${url}?sender=${encodeURIComponent(this.sender!)}`, {
      headers: this.cfg.forward.token ? { authorization: `Bearer ${this.cfg.forward.token}` } : {},
      signal: AbortSignal.timeout(this.cfg.forward.timeout_sec * 1000),
      ...this.tls,
    });
    const text = await res.text();
    if (res.status !== 200) return;
    const { last, committed } = positions(text);
    this.log!.position(last, committed);
    this.publish();
  }
}

/** `last` (held) and `committed` of the central's answer; a central without `committed` commits with `last`. */
function positions(text: string): { last: number; committed: number } {
  const a = JSON.parse(text) as { last?: unknown; committed?: unknown };
  const ok = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (!ok(a.last)) throw new Error("the central's answer has no last sequence number");
  return { last: a.last, committed: ok(a.committed) ? Math.min(a.committed, a.last) : a.last };
}
