/**
 * One HEP ingest thread (a Bun Worker running worker.ts) as the main thread sees it: started,
 * restarted after a crash (at most every 5 s), stopped; its hand-overs go to the pool (host.ts).
 * Several of these share the listeners' ports (docs/ARCHITECTURE.md "Several ingest threads").
 */
import type { Config } from "../../config/index.ts";
import {
  type SpoolFormat,
  AppError,
  errorMessage,
  type Counter,
  type Logger,
  type LogLevel,
} from "../../core/index.ts";
import { releaseStreamSlots, type StreamSlotBuffers } from "../hep/ingest.ts";
import { closeOrphanedFd } from "../hep/udp-batch.ts";
import type { MemoryFeedInit } from "./memory-feed.ts";
import type { BoundPorts, FromIngestThread, IngestThreadInit, ToIngestThread } from "./messages.ts";

/** One start of a thread: settled by its "ready" or "failed", its end or the start time-out. */
interface Attempt {
  resolve(): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
  ready: boolean;
  /** Sockets the thread opened itself (batch UDP): released only by it, or by us if it dies. */
  fds: number[];
}

export interface OneThreadOptions {
  entry: URL;
  index: number;
  count: number;
  cfg: Config["ingest"];
  maxBufferedRows: number;
  sealIntervalMs: number;
  spoolFormat?: SpoolFormat;
  timeoutMs: number;
  logLevel: LogLevel;
  /** The pool's counters (host.ts): [1 + 2i] and [2 + 2i] are this thread's. */
  shared: SharedArrayBuffer;
  streamFlag?: SharedArrayBuffer;
  restarts: Counter;
  log: Logger;
  /** Ports thread 0 bound, once known (every later start joins them). */
  ports: () => BoundPorts | undefined;
  /** The stream listeners' shared connection limits (several threads). */
  slots?: StreamSlotBuffers;
  clockTable?: SharedArrayBuffer;
  /** Packets from memory instead of listeners (bench/ingest-threads.ts only). */
  feed?: MemoryFeedInit;
  /** Hand over accepted packets as received (IngestThreadInit.raw). */
  raw?: boolean;
  /** Every message of a ready thread other than its start-up ones. */
  onMessage: (t: OneThread, m: FromIngestThread) => void;
}

export class OneThread {
  private current: Worker | undefined;
  private control: ((m: ToIngestThread, transfer?: Transferable[]) => void) | undefined;
  private stopping = false;
  private stopped: (() => void) | undefined;
  private lastRestart = 0;
  private started = false;
  /** Epoch ms of the running thread's last message; undefined while none runs. */
  lastHeard: number | undefined;
  nice: number | undefined;
  readonly ports: BoundPorts = {};
  private readonly counts: Float64Array;

  constructor(private readonly o: OneThreadOptions) {
    this.counts = new Float64Array(o.shared);
  }

  get index(): number {
    return this.o.index;
  }

  worker(): Worker | undefined {
    return this.current;
  }

  /** Whether `w` is this thread's running worker (hand-overs of a replaced one are stale). */
  isCurrent(w: Worker | undefined): boolean {
    return w !== undefined && w === this.current;
  }

  /** Sends to the running thread's control port; false when none runs. */
  send(m: ToIngestThread, transfer: Transferable[] = []): boolean {
    if (!this.control) return false;
    this.control(m, transfer);
    return true;
  }

  /** Rows the main thread took from this thread's hand-overs (for the shared backlog). */
  taken(rows: number): void {
    const at = 2 + 2 * this.o.index;
    this.counts[at] = this.counts[at]! + rows;
  }

  start(): Promise<void> {
    const first = !this.started;
    this.started = true;
    return this.spawn(first);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const w = this.current;
    if (!w) return;
    // Listeners close, the last rows are handed over, then the worker ends.
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.o.log.error("HEP ingest thread did not hand over its last rows in time", {
          thread: this.o.index,
          timeout_ms: this.o.timeoutMs,
        });
        resolve();
      }, this.o.timeoutMs);
      this.stopped = () => {
        clearTimeout(t);
        resolve();
      };
      this.control?.({ type: "stop" });
    });
    this.current = undefined;
    this.control = undefined;
    await w.terminate();
  }

  /** The pool saw the final hand-over of a stopping thread. */
  finalHandOver(): void {
    this.stopped?.();
  }

  private spawn(first: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const w = new Worker(this.o.entry.href);
      const channel = new MessageChannel();
      // A new thread (also after a crash) counts its rows from 0; rows in flight from a dead one are gone.
      this.counts[1 + 2 * this.o.index] = 0;
      this.counts[2 + 2 * this.o.index] = 0;
      // What an earlier thread in this place held is gone with it (its connections closed with it).
      if (this.o.slots) releaseStreamSlots(this.o.slots, this.o.index);
      this.current = w;
      this.control = (m, transfer = []) => channel.port1.postMessage(m, transfer);
      const a: Attempt = {
        resolve,
        reject,
        ready: false,
        fds: [],
        timer: setTimeout(() => {
          if (a.ready) return;
          reject(new Error(`HEP ingest thread ${this.o.index} did not start within ${this.o.timeoutMs} ms`));
          void w.terminate();
        }, this.o.timeoutMs),
      };
      w.onmessage = (e: MessageEvent<FromIngestThread>) => this.onMessage(w, a, e.data);
      w.addEventListener("error", (e) =>
        this.o.log.error("HEP ingest thread error", { thread: this.o.index, error: (e as ErrorEvent).message }),
      );
      w.addEventListener("close", () => this.onClose(w, a));
      const ports = this.o.ports();
      const init: IngestThreadInit = {
        ingest: this.o.cfg,
        maxBufferedRows: this.o.maxBufferedRows,
        sealIntervalMs: this.o.sealIntervalMs,
        ...(this.o.spoolFormat ? { spoolFormat: this.o.spoolFormat } : {}),
        index: this.o.index,
        count: this.o.count,
        first: first && this.o.index === 0,
        ...(ports ? { ports } : {}),
        shared: this.o.shared,
        logLevel: this.o.logLevel,
        control: channel.port2,
        ...(this.o.streamFlag ? { stream: this.o.streamFlag } : {}),
        ...(this.o.slots ? { slots: this.o.slots } : {}),
        ...(this.o.clockTable ? { clockTable: this.o.clockTable } : {}),
        ...(this.o.raw ? { raw: true } : {}),
        // Each thread its own copy: the frames are transferred.
        ...(this.o.feed ? { feed: { ...this.o.feed, frames: this.o.feed.frames.slice(0) } } : {}),
      };
      w.postMessage({ type: "init", init } satisfies ToIngestThread, [
        channel.port2,
        ...(init.feed ? [init.feed.frames] : []),
      ]);
    });
  }

  private onMessage(w: Worker, a: Attempt, m: FromIngestThread): void {
    switch (m.type) {
      case "ready":
        a.ready = true;
        a.fds = m.fds;
        clearTimeout(a.timer);
        Object.assign(this.ports, m.ports);
        this.nice = m.nice;
        a.resolve();
        break;
      case "failed":
        clearTimeout(a.timer);
        void w.terminate();
        // An AppError keeps its code across the thread (a taken port is CONFIG_INVALID: exit 2).
        a.reject(m.code ? new AppError(m.code, m.message) : new Error(m.message));
        break;
      default:
        this.o.onMessage(this, m);
    }
    // Alive only once it has its sockets: a thread logs before it is ready.
    if (w === this.current && a.ready) this.lastHeard = Date.now();
  }

  private onClose(w: Worker, a: Attempt): void {
    if (w === this.current && !this.stopping && !a.ready) {
      // Ended while starting: fail this start now rather than at the start time-out.
      clearTimeout(a.timer);
      a.reject(new Error(`HEP ingest thread ${this.o.index} ended while starting`));
      return;
    }
    if (w !== this.current || this.stopping || !a.ready) return;
    this.lastHeard = undefined;
    // Its sockets would keep the ports bound (and take datagrams nobody reads): close them first.
    const closed = a.fds.filter(closeOrphanedFd);
    a.fds = [];
    // A crash must not end ingest for good: start again (at most every 5 s).
    this.o.restarts.inc();
    this.o.log.error("HEP ingest thread ended unexpectedly; starting it again", {
      thread: this.o.index,
      in_ms: Math.max(0, this.lastRestart + 5000 - Date.now()),
      sockets_closed: closed.length,
    });
    this.respawn();
  }

  /** Starts a new thread, at most every 5 s, until one starts (a port taken meanwhile, say). */
  private respawn(): void {
    setTimeout(
      () => {
        if (this.stopping) return;
        this.lastRestart = Date.now();
        this.spawn(false).catch((err) => {
          this.o.log.error("HEP ingest thread did not start again; trying again in 5 s", {
            thread: this.o.index,
            error: errorMessage(err),
          });
          this.respawn();
        });
      },
      Math.max(0, this.lastRestart + 5000 - Date.now()),
    );
  }
}
