/**
 * Wiring of the live stream in one process (docs/STREAM.md): the broker on the main thread, fed by
 * the HEP ingest thread's hand-over (StreamFeed, src/ingest/thread/host.ts) and by the in-process pipeline
 * (HEP over HTTP; every listener when ingest.hep.threads = 0). Both capture while the broker wants
 * events: always while ingest.hep_stream.enable is on (the ring fills for `history`), else only
 * while somebody subscribes (docs/STREAM.md "Hand-over"). The ingest thread reads a shared flag
 * once per hand-over, the in-process pipeline gets its tap set and unset here.
 */
import type { Config } from "../config/index.ts";
import { AppError, type MetricsRegistry, type Module } from "../core/index.ts";
import { StreamCapture } from "../hep/index.ts";
import type { HepPipeline, StreamFeed } from "../ingest/index.ts";
import { StreamBroker, streamMetrics } from "./broker.ts";
import { StreamMerge } from "./merge.ts";
import { CLOSE } from "./outbox.ts";

export interface LiveStream {
  broker: StreamBroker;
  /** For createThreadedHepIngest: the shared flag and where the thread's chunks go. */
  feed: StreamFeed;
  /** Captures the in-process pipeline's packets while subscribed; closes subscribers at stop. */
  module(pipeline: HepPipeline): Module;
}

/** Every hand-over of the in-process capture, like the ingest thread's seal interval. */
const TICK_MS = 100;

/** Several ingest threads: an event waits at most 1 s, at most 100 000 at once (docs/STREAM.md "Several ingest threads"). */
const MERGE = { maxHoldMs: 1000, maxHeld: 100_000 };

/**
 * `allowPayload`: coordinator.hep_stream.allow_payload of a process whose coordinator is on. Off,
 * the broker sends no payload to anybody, node `/stream` and coordinator clients alike
 * (docs/STREAM.md "Security").
 */
export function createLiveStream(
  cfg: Config["ingest"]["hep_stream"],
  metrics: MetricsRegistry,
  opts: { allowPayload: boolean; hepThreads?: number },
): LiveStream {
  const m = streamMetrics(metrics);
  const broker = new StreamBroker(cfg, m, { retain: cfg.enable, allowPayload: opts.allowPayload });
  const flag = new SharedArrayBuffer(4);
  const wanted = new Int32Array(flag);
  broker.onDemand((active) => Atomics.store(wanted, 0, active ? 1 : 0));
  // Several ingest threads hand over apart: their events are put back in capture order (merge.ts).
  const threads = opts.hepThreads ?? 1;
  const merge =
    threads > 1 ? new StreamMerge((events) => broker.acceptEvents(events), { ...MERGE, threads }) : undefined;
  const accept = (bytes: Uint8Array, count: number) =>
    merge ? merge.accept(bytes, count) : broker.accept(bytes, count);
  return {
    broker,
    feed: {
      flag,
      accept,
      ...(merge ? { handedOver: (index: number, drained: boolean) => merge.handedOver(index, drained) } : {}),
    },
    module(pipeline) {
      const capture = new StreamCapture({
        initialBytes: 64 << 10,
        onDrop: () => m.dropped.inc({ reason: "capture_full" }),
      });
      let timer: ReturnType<typeof setInterval> | undefined;
      const seal = () => {
        const c = capture.seal();
        if (c) {
          accept(new Uint8Array(c.buffer, 0, c.length).slice(), c.count);
          capture.giveBack(c.buffer);
        }
      };
      broker.onDemand((active) => {
        if (active) pipeline.tap = capture.tap;
        else {
          pipeline.tap = undefined;
          seal();
        }
      });
      return {
        name: "live-stream",
        async start() {
          timer = setInterval(seal, TICK_MS);
        },
        async stop() {
          if (timer) clearInterval(timer);
          pipeline.tap = undefined;
          merge?.close();
          broker.closeAll(CLOSE.goingAway, "the server is stopping");
        },
      };
    },
  };
}

/**
 * Cross-key rules of the stream configuration (docs/STYLE.md "Configuration": an accepted key does something, or the
 * start refuses it with the reason). `hasIngest`: this process runs the HEP ingest (lake + HEP on).
 */
export function checkStreamConfig(config: Config, hasIngest: boolean): void {
  const bad: string[] = [];
  const c = config.coordinator.hep_stream;
  if (config.ingest.hep_stream.enable && !hasIngest)
    bad.push(
      "ingest.hep_stream.enable needs HEP ingest in this process (ingest.hep.enable and storage.lakehouse.enable)",
    );
  if (
    c.enable &&
    config.coordinator.enable &&
    !hasIngest &&
    c.nodes.length === 0 &&
    config.coordinator.nodes.length === 0
  ) {
    bad.push("coordinator.hep_stream.enable needs a source of events: HEP ingest in this process or coordinator.nodes");
  }
  if (c.nodes.length > 0 && !(c.enable && config.coordinator.enable))
    bad.push(
      "coordinator.hep_stream.nodes is set but the stream is off (coordinator.enable and coordinator.hep_stream.enable)",
    );
  if (bad.length)
    throw new AppError("CONFIG_INVALID", `invalid configuration:\n  ${bad.join("\n  ")}`, { details: { errors: bad } });
}
