/**
 * The options of the HEP ingest threads' host (host.ts) and what it tells about each thread
 * (docs/ARCHITECTURE.md "Several ingest threads").
 */
import type { LogLevel, SpoolFormat } from "../../core/index.ts";
import type { RawSink } from "../forward/forwarder.ts";
import type { MemoryFeedInit } from "./memory-feed.ts";

export interface IngestThreadOptions {
  /**
   * The thread's entry file (worker.ts beside this one), resolved by the composition root
   * (src/main.ts): in the executable every module's import.meta.url is the bundle's, so only a
   * file at the top of src/ resolves the path scripts/build.ts bundles the entry under.
   */
  entry: URL;
  /** Worker threads (`ingest.hep.threads` resolved by src/config/tuning.ts hepThreadCount); 1 when unset. */
  count?: number;
  sealIntervalMs?: number;
  /** How the threads seal rows for the lake's spool (storage.lakehouse.spool_format). */
  spoolFormat?: SpoolFormat;
  logLevel?: LogLevel;
  /** Time a thread has to start (bind its sockets) and to hand over its last rows at stop. */
  timeoutMs?: number;
  /** The live stream's feed: captured events of each hand-over go there (docs/STREAM.md). */
  stream?: StreamFeed;
  /** Packets from memory instead of listeners: the ingest benchmark (bench/ingest-threads.ts). */
  feed?: MemoryFeedInit;
  /** Every accepted packet as received goes here (the forward log and the mirror, docs/DEPLOY.md). */
  raw?: RawSink;
  /** The agents' clock offsets shared by every thread (createClockTableBuffer). */
  clockTable?: SharedArrayBuffer;
}

/** Where the threads' live-stream events go, and the flag that switches their capture on. */
export interface StreamFeed {
  /** [0] = 1 while events are wanted: the threads read it at each hand-over (no per-packet cost). */
  flag: SharedArrayBuffer;
  /** A tick's records, copied off the thread's buffer (which goes back to the thread at once). */
  accept(bytes: Uint8Array, count: number): void;
  /**
   * Thread `index` handed over (every seal interval, events or not), after its chunk's accept;
   * `drained`: its UDP socket was empty then (a busy thread's hand-over settles nothing).
   */
  handedOver?(index: number, drained: boolean): void;
}

/** One thread's state for /health and diagnostics. */
export interface ThreadState {
  index: number;
  /** Epoch ms of its last message; undefined while it is not running. */
  lastHeardMs: number | undefined;
  /** Share of one core the thread used over its last seconds (0..1); undefined until measured. */
  cpuShare: number | undefined;
  /** Datagrams the kernel dropped on its socket in the last minute. */
  kernelDropsLastMinute: number;
}
