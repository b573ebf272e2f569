/**
 * Packets from memory instead of sockets, for the ingest benchmark (bench/ingest-threads.ts): the
 * thread replays HEP3 frames given at start through the very pipeline the sockets feed (decode,
 * SIP parse, rows, hand-over), as fast as the thread runs or at `ratePerSec`. Not reachable from
 * the configuration: only a caller of HepIngestThreads that passes a feed gets one.
 */
import { hepFrameLength } from "../../hep/index.ts";
import type { HepPipeline } from "../pipeline.ts";

export interface MemoryFeedInit {
  /** HEP3 frames back to back (each thread gets its own copy). */
  frames: ArrayBuffer;
  /** Packets per second for this thread; 0 = as fast as it runs. */
  ratePerSec: number;
}

/** How long one turn runs before the event loop gets the thread (messages, timers), as the UDP reader. */
const TURN_MS = 4;

/** Starts replaying; the returned function stops it. */
export function startMemoryFeed(init: MemoryFeedInit, pipeline: HepPipeline): () => void {
  const buf = new Uint8Array(init.frames);
  const frames: Uint8Array[] = [];
  for (let off = 0; off < buf.length; ) {
    const len = hepFrameLength(buf, off);
    if (typeof len !== "number") break;
    frames.push(buf.subarray(off, off + len));
    off += len;
  }
  let stopped = frames.length === 0;
  let next = 0;
  let sent = 0;
  const startedMs = performance.now();
  const turn = () => {
    if (stopped) return;
    const until = performance.now() + TURN_MS;
    do {
      const due =
        init.ratePerSec > 0 ? Math.floor(((performance.now() - startedMs) / 1000) * init.ratePerSec) : sent + 256;
      for (; sent < due; sent++) {
        pipeline.handlePacket(frames[next]!, "udp", "192.0.2.10");
        next = next + 1 === frames.length ? 0 : next + 1;
      }
    } while (performance.now() < until && init.ratePerSec === 0);
    if (init.ratePerSec > 0) setTimeout(turn, 1);
    else setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    stopped = true;
  };
}
