/**
 * A HEP stream listener on its own, as one thread of a multi-threaded ingest runs it
 * (docs/ARCHITECTURE.md "Slots over several threads"): a real pipeline into a real BatchSink,
 * its own metrics, and the shared slot state and known-address table it is given. Used by the
 * tests on the main thread and by hep-shared-slots-worker.ts inside real Workers.
 */
import { createLogger, MetricsRegistry, rowsLostCounter } from "../../src/core/index.ts";
import { BatchSink } from "../../src/ingest/batch-sink.ts";
import { listenerMetrics } from "../../src/ingest/hep/ingest.ts";
import { SharedKnownAddresses } from "../../src/ingest/hep/shared-known.ts";
import { createTcpListener } from "../../src/ingest/hep/tcp.ts";
import { HepPipeline, pipelineMetrics } from "../../src/ingest/pipeline.ts";

export interface ThreadListenerInit {
  /** 0: a free port. */
  port: number;
  slots: SharedArrayBuffer;
  known: SharedArrayBuffer;
  threadIndex: number;
  reusePort: boolean;
  /** The limits `slots` was made with (the listener checks that they agree). */
  limits: { maxConnections: number; maxConnectionsPerIp: number; reservedForKnownPercent: number };
}

/** What the listener counted: accepted connections, and refusals and closes per reason. */
export interface ListenerCounts {
  accepted: number;
  closed: Record<string, number>;
}

export async function startThreadListener(init: ThreadListenerInit) {
  const registry = new MetricsRegistry();
  const logger = createLogger({ thread: init.threadIndex });
  const sink = new BatchSink({
    define: async (def) => def,
    backlog: () => 0,
    maxBufferedRows: 1_000_000,
    rowsLost: rowsLostCounter(registry),
  });
  const pipeline = new HepPipeline(
    sink,
    {
      customHeaders: [],
      correlationHeaders: [],
      authKey: "",
      maxSkewMs: 3_600_000,
      maxAgeMs: 86_400_000,
      timeShift: { enable: true, maxAheadMs: 60_000, reanchorGapMs: 60_000, maxSources: 100 },
    },
    pipelineMetrics(registry),
    logger,
  );
  await pipeline.start();
  const counters = listenerMetrics(registry);
  const listener = createTcpListener(
    pipeline,
    {
      listen: `127.0.0.1:${init.port}`,
      ...init.limits,
      idleTimeoutMs: 600_000,
      frameTimeoutMs: 600_000,
      maxBufferBytes: 1 << 20,
      known: new SharedKnownAddresses(init.known),
      shared: init.slots,
      threadIndex: init.threadIndex,
      reusePort: init.reusePort,
    },
    logger,
    counters,
  );
  await listener.start();
  const counts = (): ListenerCounts => {
    const closed: Record<string, number> = {};
    for (const [k, v] of counters.closed.series()) closed[/reason="([a-z_]+)"/.exec(k)?.[1] ?? k] = v;
    return { accepted: counters.connections.total(), closed };
  };
  return {
    port: listener.port(),
    counts,
    /** Packets the pipeline took as HEP. */
    received: () => registry.render().match(/^svc_hep_packets_received_total\{transport="tcp"\} (\d+)$/m)?.[1] ?? "0",
    async stop() {
      await listener.stop();
      pipeline.stop();
    },
  };
}

/** Connections the listener accepted or refused at accept. */
export const seenBy = (c: ListenerCounts): number =>
  c.accepted + (c.closed.max_connections ?? 0) + (c.closed.per_ip_limit ?? 0) + (c.closed.reserved_for_known ?? 0);
