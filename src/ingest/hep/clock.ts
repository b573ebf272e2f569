/**
 * Agent time stamps outside the accepted window (docs/ARCHITECTURE.md "Agent clocks outside the
 * accepted window"). A packet whose HEP time lies in [now - ingest.hep.max_age_days,
 * now + ingest.hep.max_clock_skew_sec] keeps it. Outside, the time is shifted by one offset per
 * source (agent address + capture id), fixed at the source's first out-of-window packet as
 * arrival time - packet time, so a replay of an old capture keeps its spacing and order instead of
 * every message collapsing onto its arrival time. The offset is fixed again (re-anchored) when the
 * shifted time would fall outside [now - reanchor_gap_sec, now + max_ahead_sec] or the source sent
 * nothing out of window for reanchor_gap_sec. Sources are an LRU of `max_sources` entries, one
 * table for all ingest threads (clock-table.ts).
 */
import type { HepPacket } from "../../hep/index.ts";
import { LocalClockStore, SharedClockTable, type ClockStore } from "./clock-table.ts";

/** A packet after the clock check: `timeShiftUs` is set when its time was shifted (row data_extra.time_shifted_us). */
export type ClockedPacket = HepPacket & { timeShiftUs?: number };

/** Labels of svc_hep_timestamp_fallback_total. */
export const TIME_FALLBACK_REASONS = ["missing", "too_old", "too_new"] as const;
export type TimeFallbackReason = (typeof TIME_FALLBACK_REASONS)[number];

export interface SourceClockOptions {
  maxAgeMs: number;
  maxSkewMs: number;
  /** false: every out-of-window packet gets its arrival time (the behaviour before shifting). */
  shift: boolean;
  maxAheadMs: number;
  reanchorGapMs: number;
  maxSources: number;
}

export class SourceClocks {
  /** Offsets fixed again for a known source (svc_hep_time_shift_reanchors_total). */
  reanchors = 0;
  private readonly store: ClockStore;

  /** `shared`: the one table of several ingest threads (clock-table.ts); otherwise this pipeline's own LRU. */
  constructor(
    private readonly o: SourceClockOptions,
    shared?: SharedArrayBuffer,
  ) {
    this.store = shared ? new SharedClockTable(shared) : new LocalClockStore(o.maxSources);
  }

  get size(): number {
    return this.store.size;
  }

  /**
   * Checks `p.timestampUs` (the agent's time as decoded with an unbounded window) against the
   * accepted window at `nowMs`; outside it, sets the shifted time, `tsFallback` and `timeShiftUs`.
   * Returns why the agent's time was not used as is, or undefined when it was.
   */
  apply(p: ClockedPacket, source: string, nowMs: number): TimeFallbackReason | undefined {
    const nowUs = Math.floor(nowMs * 1000);
    // The decoder already put the receive time on packets without a time chunk. A time of exactly
    // 0 is an agent with an unset clock, not a capture from 1970: receive time too.
    if (p.tsFallback || p.timestampUs === 0) {
      p.timestampUs = nowUs;
      p.tsFallback = true;
      return "missing";
    }
    const agentUs = p.timestampUs;
    const lowUs = nowUs - this.o.maxAgeMs * 1000;
    const highUs = nowUs + this.o.maxSkewMs * 1000;
    if (agentUs >= lowUs && agentUs <= highUs) return undefined;
    const reason: TimeFallbackReason = agentUs < lowUs ? "too_old" : "too_new";
    p.tsFallback = true;
    if (!this.o.shift) {
      p.timestampUs = nowUs;
      return reason;
    }
    const aheadUs = nowUs + Math.min(this.o.maxAheadMs, this.o.maxSkewMs) * 1000;
    const behindUs = nowUs - this.o.reanchorGapMs * 1000;
    const s = this.store.update(source, (known) => {
      if (!known) return { offsetUs: nowUs - agentUs, lastMs: nowMs };
      const shifted = agentUs + known.offsetUs;
      if (nowMs - known.lastMs > this.o.reanchorGapMs || shifted > aheadUs || shifted < behindUs) {
        this.reanchors++;
        return { offsetUs: nowUs - agentUs, lastMs: nowMs };
      }
      return { offsetUs: known.offsetUs, lastMs: nowMs };
    });
    p.timestampUs = agentUs + s.offsetUs;
    p.timeShiftUs = s.offsetUs;
    return reason;
  }
}
