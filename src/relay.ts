/**
 * Wiring of store-and-forward (docs/DEPLOY.md): the edge's forward log and live mirror
 * (ingest.forward, ingest.mirror) and the central's receiver of edges' batches. Both keep their
 * files beside the spool, in the lake's state directory (storage.lakehouse.state_path).
 */
import { join } from "node:path";
import { ForwardReceiver } from "./cluster/index.ts";
import type { Config } from "./config/index.ts";
import type { Logger, MetricsRegistry } from "./core/index.ts";
import { type HepIngest, HepRelay } from "./ingest/index.ts";
import { type Lake, lakeStateDir } from "./lake/index.ts";

const stateDir = (config: Config) => lakeStateDir(config.storage.lakehouse);

/** The edge's relay when forwarding (with a lake) or a mirror (with HEP ingest too) is configured. */
export function createRelay(
  config: Config,
  lake: Lake | undefined,
  logger: Logger,
  metrics: MetricsRegistry,
): HepRelay | undefined {
  const on = config.ingest.forward.enable || config.ingest.mirror.destinations.length > 0;
  // Forwarding covers line protocol and OTLP too, so it runs without HEP ingest; the mirror is HEP only.
  return lake && on && (config.ingest.hep.enable || config.ingest.forward.enable)
    ? new HepRelay(config.ingest, join(stateDir(config), "forward"), logger.child({ module: "forward" }), metrics)
    : undefined;
}

/**
 * The central's receiver (POST /api/v1/forward), on every node with a lake and ingest.hep.http.enable;
 * it has its own pipeline, so a central that captures nothing itself (ingest.hep.enable false) takes batches too.
 */
export function createForwardReceiver(
  config: Config,
  lake: Lake | undefined,
  logger: Logger,
  metrics: MetricsRegistry,
  ingest?: HepIngest,
): { forward?: ForwardReceiver } {
  if (!lake || !config.ingest.hep.http.enable) return {};
  const dir = join(stateDir(config), "forward-in");
  const lh = config.storage.lakehouse;
  return {
    forward: new ForwardReceiver({
      ingest: config.ingest,
      lake,
      dir,
      maxBufferedRows: lh.max_buffered_rows,
      batchSize: lh.batch_size,
      flushIntervalMs: lh.flush_interval_sec * 1000,
      logger: logger.child({ module: "forward-in" }),
      metrics,
      // HEP batches decoded on the ingest threads when they run (docs/DEPLOY.md "Forward protocol").
      ...(ingest?.forward ? { hepThreads: ingest.forward } : {}),
    }),
  };
}
