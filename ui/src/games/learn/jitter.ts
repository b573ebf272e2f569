/**
 * Jitter Buffer Hero, the pure part (docs/GAMES.md "Jitter Buffer Hero"): packet delay variation
 * from a jitter figure, the playout buffer's late loss, and an E-model-like MOS (ITU-T G.107,
 * simplified as Cole and Rosenbluth did) for G.711 with packet loss concealment.
 */
import { seededRandom } from "./random.ts";

/** G.711 packetisation: one packet every 20 ms. */
export const PACKET_MS = 20;
/** Network transit and codec delay the buffer adds to (one way, ms): see docs/GAMES.md. */
export const BASE_DELAY_MS = 60;
/** Packet-loss robustness of G.711 with PLC under random loss (ITU-T G.113 Appendix I). */
export const BPL_G711_PLC = 25.1;

/**
 * Delay variation (ms above the fastest path) of `count` packets for an RFC 3550 interarrival
 * jitter of `jitterMs`: exponential with mean `jitterMs`, because for two independent exponential
 * delays of mean m the mean |D(i) − D(i−1)| is m, which is what the RFC 3550 §6.4.1 estimator
 * converges to.
 */
export function delayVariation(jitterMs: number, count: number, seed: number): number[] {
  const rand = seededRandom(seed);
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(jitterMs <= 0 ? 0 : -jitterMs * Math.log(1 - rand()));
  return out;
}

/** RFC 3550 §6.4.1 interarrival jitter estimate over a delay sequence (J += (|D| − J) / 16). */
export function rfc3550Jitter(delays: readonly number[]): number {
  let j = 0;
  for (let i = 1; i < delays.length; i++) j += (Math.abs(delays[i]! - delays[i - 1]!) - j) / 16;
  return j;
}

/** Share of packets (0..1) that arrive after their playout time with a buffer of `bufferMs`. */
export function lateShare(variation: readonly number[], bufferMs: number): number {
  if (variation.length === 0) return 0;
  return variation.filter((d) => d > bufferMs).length / variation.length;
}

/**
 * MOS estimate from one-way delay (ms) and packet loss (0..1):
 *   Id = 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)
 *   Ie,eff = Ie + (95 − Ie)·Ppl / (Ppl + Bpl), with Ie = 0 and Bpl = 25.1 (G.711 with PLC), Ppl in %
 *   R = 93.2 − Id − Ie,eff
 *   MOS = 1 (R < 0), 4.5 (R > 100), else 1 + 0.035·R + R·(R − 60)·(100 − R)·7·10⁻⁶
 */
export function mosEstimate(delayMs: number, loss: number): { r: number; mos: number } {
  const d = Math.max(0, delayMs);
  const id = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0);
  const ppl = Math.min(100, Math.max(0, loss * 100));
  const ie = (95 * ppl) / (ppl + BPL_G711_PLC);
  const r = 93.2 - id - ie;
  const mos = r < 0 ? 1 : r > 100 ? 4.5 : 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
  return { r, mos };
}

/** Mouth-to-ear delay and MOS of one stretch of packets played with a buffer of `bufferMs`. */
export function playout(
  variation: readonly number[],
  bufferMs: number,
  networkLoss = 0,
): { late: number; loss: number; delayMs: number; mos: number } {
  const late = lateShare(variation, bufferMs);
  const loss = 1 - (1 - late) * (1 - networkLoss);
  const delayMs = BASE_DELAY_MS + bufferMs;
  return { late, loss, delayMs, mos: mosEstimate(delayMs, loss).mos };
}

/** The buffer (a multiple of `step` up to `max` ms) with the best MOS for these packets: the par of a phase. */
export function bestBuffer(
  variation: readonly number[],
  networkLoss = 0,
  max = 300,
  step = 5,
): { bufferMs: number; mos: number } {
  let best = { bufferMs: 0, mos: -1 };
  for (let b = 0; b <= max; b += step) {
    const { mos } = playout(variation, b, networkLoss);
    if (mos > best.mos + 1e-9) best = { bufferMs: b, mos };
  }
  return best;
}

/** One phase of a round: a jitter figure (ms) and network loss (0..1) from an RTCP report, or synthetic. */
export interface Phase {
  jitterMs: number;
  loss: number;
  source: string;
}

/** Synthetic profile when no RTCP was captured: calm, a burst of congestion, Wi-Fi, recovery. */
export const SYNTHETIC_PHASES: readonly Phase[] = [
  { jitterMs: 4, loss: 0, source: "synthetic" },
  { jitterMs: 12, loss: 0, source: "synthetic" },
  { jitterMs: 45, loss: 0.01, source: "synthetic" },
  { jitterMs: 25, loss: 0, source: "synthetic" },
  { jitterMs: 70, loss: 0.02, source: "synthetic" },
  { jitterMs: 8, loss: 0, source: "synthetic" },
];

/**
 * Phases from RTCP rows of the search API: the first report block's interarrival jitter (RTP
 * timestamp units, RFC 3550 §6.4.1) in ms at an 8 kHz clock (G.711; the rows carry no SDP), or an
 * agent's `jitter` already in ms; fraction_lost is in 1/256 (RFC 3550 §6.4.1).
 */
export function phasesFromRtcp(payloads: readonly string[], max = 6): Phase[] {
  const out: Phase[] = [];
  for (const p of payloads) {
    let j: unknown;
    try {
      j = JSON.parse(p);
    } catch {
      continue;
    }
    if (!j || typeof j !== "object") continue;
    const o = j as Record<string, unknown>;
    const block = Array.isArray(o.report_blocks)
      ? (o.report_blocks[0] as Record<string, unknown> | undefined)
      : undefined;
    const ia =
      typeof block?.ia_jitter === "number" ? block.ia_jitter / 8 : typeof o.jitter === "number" ? o.jitter : undefined;
    if (ia === undefined || !Number.isFinite(ia) || ia < 0) continue;
    const fl = typeof block?.fraction_lost === "number" ? Math.min(1, Math.max(0, block.fraction_lost / 256)) : 0;
    out.push({ jitterMs: Math.round(ia * 10) / 10, loss: fl, source: "RTCP" });
    if (out.length >= max) break;
  }
  return out;
}
