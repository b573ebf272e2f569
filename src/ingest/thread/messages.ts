/**
 * The messages between the main thread (host.ts) and the HEP ingest thread (worker.ts), shared by
 * both sides (docs/ARCHITECTURE.md "The HEP ingest thread"). Buffers travel transferred, never copied.
 */
import type { Config } from "../../config/index.ts";
import type { ErrorCode, LogLevel, SpoolFormat, TableDef } from "../../core/index.ts";
import type { CaptureChunk } from "../../hep/index.ts";
import type { AgentActivity } from "../agents.ts";
import type { SealedBatch } from "../batch-sink.ts";
import type { ForwardDecoded } from "../forward/hep-records.ts";
import type { RawChunk } from "../forward/raw-batch.ts";
import type { StreamSlotBuffers } from "../hep/ingest.ts";
import type { MemoryFeedInit } from "./memory-feed.ts";

export interface IngestThreadInit {
  ingest: Config["ingest"];
  maxBufferedRows: number;
  sealIntervalMs: number;
  /** How rows are sealed for the lake's spool (BatchSink). */
  spoolFormat?: SpoolFormat;
  /** This thread's number (0 first) and how many threads share the listeners' ports. */
  index: number;
  count: number;
  /**
   * The first start of thread 0 of several: the ports must be free of any other socket (with
   * SO_REUSEPORT a process of the same user could otherwise share them unseen).
   */
  first: boolean;
  /** Ports already bound by thread 0 (threads after it, and any restart, join those). */
  ports?: BoundPorts;
  /**
   * Float64Array over it: [0] the lake's backlog (rows) less every row taken from the threads; for
   * thread i, [1 + 2i] rows it has handed over and [2 + 2i] rows the main thread has taken from it
   * (both since its start).
   */
  shared: SharedArrayBuffer;
  /**
   * Where every later message to the thread arrives (ToIngestThread other than init): the thread
   * also takes them synchronously between packets, so a busy socket cannot hold them back.
   */
  control: MessagePort;
  logLevel: LogLevel;
  /** Int32Array over it: [0] is 1 while the live-stream broker wants events (docs/STREAM.md "Hand-over"). */
  stream?: SharedArrayBuffer;
  /** The stream listeners' shared connection limits (several threads; src/ingest/hep/ingest.ts). */
  slots?: StreamSlotBuffers;
  /** The agents' clock offsets, one table for every thread (src/ingest/hep/clock-table.ts). */
  clockTable?: SharedArrayBuffer;
  /** Packets from memory instead of listeners (the ingest benchmark only, memory-feed.ts). */
  feed?: MemoryFeedInit;
  /** Hand over every accepted packet as received (the forward log and the live mirror, docs/DEPLOY.md). */
  raw?: boolean;
}

export type BoundPorts = { udp?: number; tcp?: number; tls?: number };

/** What HEP over HTTP answers for one body (pipeline.ts handleStream). */
export interface HepBodyResult {
  accepted: number;
  rejected: Record<string, number>;
  unframed?: string;
}

export type ToIngestThread =
  | { type: "init"; init: IngestThreadInit }
  | { type: "defined"; id: number; def?: TableDef; error?: string }
  | { type: "spare"; key: string; buffer: ArrayBuffer }
  | { type: "stream-spare"; buffer: ArrayBuffer }
  | { type: "hep"; id: number; body: ArrayBuffer; remoteIp?: string }
  /**
   * A central's forward batch (length-prefixed HEP packets, the first `skip` replays): decoded into
   * a sink of its own, answered with exactly its rows; `room` rows at most (the receiver's buffer).
   */
  | { type: "forward"; id: number; body: ArrayBuffer; skip: number; room: number; remoteIp?: string }
  | { type: "stop" };

export type FromIngestThread =
  | { type: "ready"; ports: BoundPorts; nice?: number; fds: number[] }
  | { type: "hep-result"; id: number; result: HepBodyResult }
  | { type: "forward-result"; id: number; result?: ForwardDecoded; error?: string }
  | { type: "failed"; message: string; code?: ErrorCode }
  | { type: "define"; id: number; def: TableDef }
  | {
      type: "batches";
      batches: SealedBatch[];
      counters: Array<[string, string, number]>;
      agents: AgentActivity[];
      final: boolean;
      stream?: CaptureChunk;
      /** The accepted packets since the last hand-over, as received (with IngestThreadInit.raw). */
      raw?: RawChunk;
      /** CPU seconds the thread has used since it started (undefined where the clock is unavailable). */
      cpuSec?: number;
      /**
       * false when the UDP socket still held datagrams at this hand-over (the thread was busy, or
       * it handed over from inside a packet): the live stream then does not count it as settling
       * the other threads' events (docs/STREAM.md "Several ingest threads").
       */
      drained?: boolean;
    }
  | { type: "log"; level: LogLevel; msg: string; ctx: Record<string, unknown> };
