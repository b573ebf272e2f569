/**
 * Agent time stamps outside the accepted window (docs/ARCHITECTURE.md "Agent clocks outside the
 * accepted window"). A packet whose HEP time lies in [now - ingest.hep.max_age_days,
 * now + ingest.hep.max_clock_skew_sec] keeps it. Outside, the time is shifted by one offset per
 * source (agent address + capture id), fixed at the source's first out-of-window packet as
 * arrival time - packet time, so a replay of an old capture keeps its spacing and order instead of
 * every message collapsing onto its arrival time. The offset is fixed again (re-anchored) when the
 * shifted time would fall outside [now - reanchor_gap_sec, now + max_ahead_sec] or the source sent
 * nothing out of window for reanchor_gap_sec. Sources are an LRU of `max_sources` entries.
 */
import type { HepPacket } from "../../hep/index.ts";

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

interface Source {
  offsetUs: number;
  lastMs: number;
}

export class SourceClocks {
  /** Insertion order is recency: a hit is deleted and set again, the first key is the least recent. */
  private readonly sources = new Map<string, Source>();
  /** Offsets fixed again for a known source (svc_hep_time_shift_reanchors_total). */
  reanchors = 0;

  constructor(private readonly o: SourceClockOptions) {}

  get size(): number {
    return this.sources.size;
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
    let s = this.sources.get(source);
    if (s) this.sources.delete(source);
    const aheadUs = nowUs + Math.min(this.o.maxAheadMs, this.o.maxSkewMs) * 1000;
    const behindUs = nowUs - this.o.reanchorGapMs * 1000;
    if (s) {
      const shifted = agentUs + s.offsetUs;
      if (nowMs - s.lastMs > this.o.reanchorGapMs || shifted > aheadUs || shifted < behindUs) {
        s.offsetUs = nowUs - agentUs;
        this.reanchors++;
      }
      s.lastMs = nowMs;
    } else {
      s = { offsetUs: nowUs - agentUs, lastMs: nowMs };
      if (this.sources.size >= this.o.maxSources) {
        const oldest = this.sources.keys().next().value;
        if (oldest !== undefined) this.sources.delete(oldest);
      }
    }
    this.sources.set(source, s);
    p.timestampUs = agentUs + s.offsetUs;
    p.timeShiftUs = s.offsetUs;
    return reason;
  }
}
