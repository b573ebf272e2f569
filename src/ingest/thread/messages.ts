/**
 * The messages between the main thread (host.ts) and the HEP ingest thread (worker.ts), shared by
 * both sides (docs/ARCHITECTURE.md "The HEP ingest thread"). Buffers travel transferred, never copied.
 */
import type { Config } from "../../config/index.ts";
import type { ErrorCode, LogLevel, TableDef } from "../../core/index.ts";
import type { CaptureChunk } from "../../hep/index.ts";
import type { AgentActivity } from "../agents.ts";
import type { SealedBatch } from "../batch-sink.ts";

export interface IngestThreadInit {
  ingest: Config["ingest"];
  maxBufferedRows: number;
  sealIntervalMs: number;
  /** Float64Array over it: [0] the lake's backlog (rows), [1] rows taken from the worker so far. */
  shared: SharedArrayBuffer;
  /**
   * Where every later message to the thread arrives (ToIngestThread other than init): the thread
   * also takes them synchronously between packets, so a busy socket cannot hold them back.
   */
  control: MessagePort;
  logLevel: LogLevel;
  /** Int32Array over it: [0] is 1 while the live-stream broker wants events (docs/STREAM.md "Hand-over"). */
  stream?: SharedArrayBuffer;
}

export type ToIngestThread =
  | { type: "init"; init: IngestThreadInit }
  | { type: "defined"; id: number; def?: TableDef; error?: string }
  | { type: "spare"; key: string; buffer: ArrayBuffer }
  | { type: "stream-spare"; buffer: ArrayBuffer }
  | { type: "stop" };

export type FromIngestThread =
  | { type: "ready"; ports: { udp?: number; tcp?: number; tls?: number }; nice?: number; fds: number[] }
  | { type: "failed"; message: string; code?: ErrorCode }
  | { type: "define"; id: number; def: TableDef }
  | { type: "batches"; batches: SealedBatch[]; counters: Array<[string, string, number]>; agents: AgentActivity[]; final: boolean; stream?: CaptureChunk }
  | { type: "log"; level: LogLevel; msg: string; ctx: Record<string, unknown> };
