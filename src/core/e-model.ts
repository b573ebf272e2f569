/**
 * ITU-T G.107 E-model, simplified the way RTP monitors use it (docs/CALL-VIEW.md "MOS by the
 * E-model"): R = 93.2 − Id − Ie,eff, where 93.2 is Ro − Is with every other G.107 parameter at its
 * default; Ie,eff = Ie + (95 − Ie) · Ppl / (Ppl + Bpl) (random loss, BurstR 1); Id from the one-way
 * delay Ta by the usual fit of G.107's delay curve (Cole and Rosenbluth): 0.024 Ta + 0.11 (Ta − 177.3)
 * above 177.3 ms. MOS from R by G.107 Annex B: 1 + 0.035 R + R (R − 60) (100 − R) · 7·10⁻⁶.
 * Shared by loadgen's synthetic media reports and by the QoS of RTCP reports and RTP streams.
 */
export interface EModelInput {
  /** Equipment impairment factor of the codec (ITU-T G.113 Appendix I: G.711 0, G.729A 11). */
  ie: number;
  /** Packet-loss robustness factor (G.113 Appendix I: G.711 with PLC 25.1, G.729A 19). */
  bpl?: number;
  /** Packet loss in percent (0..100). */
  ppl?: number;
  /** One-way mouth-to-ear delay in ms. */
  delayMs?: number;
}

/** G.107's default robustness when the codec is not rated: G.711 with packet loss concealment. */
export const DEFAULT_BPL = 25.1;

export function eModel(input: number | EModelInput): { r: number; mos: number } {
  const x = typeof input === "number" ? { ie: input } : input;
  const ppl = Math.min(100, Math.max(0, x.ppl ?? 0));
  const bpl = x.bpl ?? DEFAULT_BPL;
  const ieEff = ppl === 0 ? x.ie : x.ie + ((95 - x.ie) * ppl) / (ppl + bpl);
  const ta = Math.max(0, x.delayMs ?? 0);
  const id = 0.024 * ta + (ta > 177.3 ? 0.11 * (ta - 177.3) : 0);
  const r = Math.round((93.2 - id - ieEff) * 10) / 10;
  return { r, mos: mosFromR(r) };
}

/** G.107 Annex B, to two decimals: R ≤ 0 gives 1, R ≥ 100 gives 4.5. */
export function mosFromR(r: number): number {
  const mos = r <= 0 ? 1 : r >= 100 ? 4.5 : 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
  return Math.round(mos * 100) / 100;
}

/** Ie and Bpl per codec name (G.113 Appendix I); wideband codecs the narrowband model cannot credit are rated as G.711. */
export const CODEC_IMPAIRMENT: Record<string, { ie: number; bpl: number }> = {
  pcmu: { ie: 0, bpl: 25.1 },
  pcma: { ie: 0, bpl: 25.1 },
  g722: { ie: 0, bpl: 25.1 },
  opus: { ie: 0, bpl: 25.1 },
  g729: { ie: 11, bpl: 19 },
  g723: { ie: 15, bpl: 16.1 },
  gsm: { ie: 20, bpl: 10 },
};
