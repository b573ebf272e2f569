/**
 * One forwarded stream of records (docs/DEPLOY.md "Forward protocol"): its forward log and the
 * loop that sends it in order, a bounded batch per POST <url>/api/v1/forward (gzip body of
 * length-prefixed records; headers with the sender id, the stream's kind, the batch's first and
 * last seq and the log's floor; the central's node token as Bearer). The central answers with the
 * last seq it holds and the last it committed; the log moves its cursor after the first and deletes
 * up to the second, so a kill -9 of either side sends again what the central has not committed and
 * the central drops the replayed part. Failures back off exponentially with jitter (0.25 s to 10 s).
 * Kinds: `hep` (HEP packets), `line_protocol` and `otlp` (accepted requests, records.ts).
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { Config } from "../../config/index.ts";
import { type clientTlsOptions, errorMessage, type Counter, type Gauge, type Logger } from "../../core/index.ts";
import type { ForwardBatch, ForwardLog } from "./forward-log.ts";

const gzipAsync = promisify(gzip);

/** Headers of a forward batch (docs/DEPLOY.md "Forward protocol"). */
export const FORWARD_HEADERS = {
  sender: "x-svc-forward-sender",
  kind: "x-svc-forward-kind",
  first: "x-svc-forward-first",
  last: "x-svc-forward-last",
  floor: "x-svc-forward-floor",
} as const;
export const FORWARD_PATH = "/api/v1/forward";

export type ForwardKind = "hep" | "line_protocol" | "otlp";
export const FORWARD_KINDS: readonly ForwardKind[] = ["hep", "line_protocol", "otlp"];

export interface StreamMetrics {
  sent: Counter;
  sentBytes: Counter;
  retries: Counter;
  up: Gauge;
}

export class ForwardStream {
  failures = 0;
  lastError = "";
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private abort: AbortController | undefined;
  private polledAtMs = 0;

  constructor(
    readonly kind: ForwardKind,
    readonly log: ForwardLog,
    private readonly cfg: Config["ingest"]["forward"],
    private readonly sender: string,
    private readonly tls: ReturnType<typeof clientTlsOptions>,
    private readonly m: StreamMetrics,
    private readonly logger: Logger,
    private readonly publish: () => void,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.sendLoop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort?.abort();
    this.wakeUp?.();
    await this.loop;
    this.log.close();
  }

  append(bytes: Uint8Array, count: number): void {
    this.log.append(bytes, count);
    this.wakeUp?.();
  }

  private async sendLoop(): Promise<void> {
    const url = `${this.cfg.url.replace(/\/+$/, "")}${FORWARD_PATH}`;
    while (this.running) {
      const b = this.log.read(this.cfg.batch_packets, this.cfg.batch_bytes);
      if (!b) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 1000);
          this.wakeUp = () => {
            clearTimeout(t);
            this.wakeUp = undefined;
            resolve();
          };
        });
        // Nothing to send, but the central holds records it has not committed: ask it, at most
        // once a second, whether it did or whether it restarted and needs them again.
        if (this.running && this.log.uncommitted() > 0 && Date.now() - this.polledAtMs >= 1000) {
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
        if (this.failures === 1 || this.failures % 20 === 0)
          this.logger.warn("forward batch failed; retrying", {
            kind: this.kind,
            failures: this.failures,
            error: this.lastError,
            first: b.first,
            last: b.last,
          });
        const backoff = Math.min(10_000, 250 * 2 ** Math.min(this.failures - 1, 6)) * (0.5 + Math.random() / 2);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, backoff);
          this.wakeUp = () => {
            if (this.running) return; // new records do not cut a back-off short
            clearTimeout(t);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
      this.publish();
    }
  }

  private async sendBatch(url: string, b: ForwardBatch): Promise<void> {
    const body = await gzipAsync(b.body, { level: 1 });
    this.abort = new AbortController();
    const timer = setTimeout(() => this.abort?.abort(), this.cfg.timeout_sec * 1000);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/octet-stream",
          "content-encoding": "gzip",
          [FORWARD_HEADERS.sender]: this.sender,
          [FORWARD_HEADERS.kind]: this.kind,
          [FORWARD_HEADERS.first]: String(b.first),
          [FORWARD_HEADERS.last]: String(b.last),
          [FORWARD_HEADERS.floor]: String(this.log.floor()),
          ...(this.cfg.token ? { authorization: `Bearer ${this.cfg.token}` } : {}),
        },
        body,
        signal: this.abort.signal,
        ...this.tls,
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      const { last, committed } = positions(text);
      this.log.ack(b, last, committed);
      const taken = Math.max(0, Math.min(last, b.last) - b.first + 1);
      this.m.sent.inc(undefined, taken);
      if (taken > 0) this.m.sentBytes.inc(undefined, body.length);
    } finally {
      clearTimeout(timer);
    }
  }

  /** GET the central's positions of this stream (docs/DEPLOY.md "Forward protocol"). */
  private async askPosition(url: string): Promise<void> {
    const res = await fetch(`${url}?sender=${encodeURIComponent(this.sender)}&kind=${this.kind}`, {
      headers: this.cfg.token ? { authorization: `Bearer ${this.cfg.token}` } : {},
      signal: AbortSignal.timeout(this.cfg.timeout_sec * 1000),
      ...this.tls,
    });
    const text = await res.text();
    if (res.status !== 200) return;
    const { last, committed } = positions(text);
    this.log.position(last, committed);
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
