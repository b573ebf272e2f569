/**
 * A round of Jitter Buffer Hero as pure state (docs/GAMES.md "Jitter Buffer Hero"): phases of 2 s,
 * a tick every 100 ms plays 5 packets with the buffer the player holds at that moment; the MOS of
 * the last second of packets earns points every tick. The widget only renders and drives ticks.
 */
import { BASE_DELAY_MS, PACKET_MS, bestBuffer, delayVariation, mosEstimate, type Phase } from "./jitter.ts";

export const TICK_MS = 100;
export const PHASE_MS = 2000;
/** Packets in the MOS window (1 s). */
export const WINDOW = 1000 / PACKET_MS;
export const MAX_BUFFER_MS = 300;

export interface Played {
  /** Delay variation (ms) of the packet. */
  d: number;
  late: boolean;
  bufferMs: number;
}

export interface Round {
  phases: Phase[];
  /** Delay variation per packet of each phase. */
  variation: number[][];
  tick: number;
  played: Played[];
  points: number;
  /** Points the best fixed buffer of each phase would earn (the par). */
  par: number;
  /** That best fixed buffer (ms) of each phase. */
  parBuffers: number[];
  mos: number;
  loss: number;
  done: boolean;
}

const TICKS_PER_PHASE = PHASE_MS / TICK_MS;
const PER_TICK = TICK_MS / PACKET_MS;

export function newRound(phases: readonly Phase[], seed: number): Round {
  const list = phases.length > 0 ? [...phases] : [{ jitterMs: 0, loss: 0, source: "synthetic" }];
  const variation = list.map((p, i) => delayVariation(p.jitterMs, PHASE_MS / PACKET_MS, seed + i * 7919));
  const best = list.map((p, i) => bestBuffer(variation[i]!, p.loss, MAX_BUFFER_MS));
  const par = best.reduce((sum, b) => sum + Math.round(b.mos * 10) * TICKS_PER_PHASE, 0);
  return {
    phases: list,
    variation,
    tick: 0,
    played: [],
    points: 0,
    par,
    parBuffers: best.map((b) => b.bufferMs),
    mos: 0,
    loss: 0,
    done: false,
  };
}

export const totalTicks = (r: Round) => r.phases.length * TICKS_PER_PHASE;
export const phaseIndex = (r: Round) => Math.min(r.phases.length - 1, Math.floor(r.tick / TICKS_PER_PHASE));

/** Plays the next tick's packets with `bufferMs`; points are round(MOS × 10) of the last second. */
export function advance(r: Round, bufferMs: number): Round {
  if (r.done) return r;
  const b = Math.max(0, Math.min(MAX_BUFFER_MS, bufferMs));
  const p = Math.floor(r.tick / TICKS_PER_PHASE);
  const start = (r.tick % TICKS_PER_PHASE) * PER_TICK;
  const fresh = r.variation[p]!.slice(start, start + PER_TICK).map((d) => ({ d, late: d > b, bufferMs: b }));
  const played = [...r.played, ...fresh].slice(-4 * WINDOW);
  const recent = played.slice(-WINDOW);
  const late = recent.filter((x) => x.late).length / recent.length;
  const loss = 1 - (1 - late) * (1 - r.phases[p]!.loss);
  const mos = mosEstimate(BASE_DELAY_MS + b, loss).mos;
  const tick = r.tick + 1;
  return { ...r, tick, played, points: r.points + Math.round(mos * 10), mos, loss, done: tick >= totalTicks(r) };
}
