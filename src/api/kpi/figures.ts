import { NER_OUTCOMES, OUTCOMES, type Outcome } from "./sql.ts";

/**
 * The KPI figures of docs/KPIS.md and the sums they are taken from: `Acc` adds a step's rows (or
 * another node's sums of the same step) and gives the figures (ratios, means, maxima) at the end.
 */
/** One step's sums as JSON (±Infinity of an empty max/min as null), for a coordinator's sum over nodes. */
export interface KpiAccJson {
  outcomes: Record<string, number>;
  regs: Record<string, number>;
  pdd: number[];
  setup: number[];
  dur: number[];
  rtcp: number;
  jit: Array<number | null>;
  fl: Array<number | null>;
  mos: Array<number | null>;
}

export const REG_OUTCOMES = ["success", "challenged", "failed", "no_response", "pending"] as const;
export type RegOutcome = (typeof REG_OUTCOMES)[number];

export interface KpiFigures {
  attempts: number;
  outcomes: Record<Outcome, number>;
  /** answered / completed attempts (attempts − pending); null without completed attempts. */
  asr: number | null;
  ner: number | null;
  /** Mean duration of answered calls whose BYE was seen, seconds. */
  acd_s: number | null;
  /** Mean INVITE → first non-100 provisional or 2xx (RFC 6076 SRD), ms. */
  pdd_ms: number | null;
  /** Mean INVITE → first 2xx of answered calls, ms. */
  setup_ms: number | null;
  registrations: Record<RegOutcome, number>;
  /** success / (success + failed + no_response); null without such REGISTERs. */
  registration_success_ratio: number | null;
  rtcp_reports: number;
  jitter_ms_avg: number | null;
  jitter_ms_max: number | null;
  loss_pct_avg: number | null;
  loss_pct_max: number | null;
  mos_avg: number | null;
  mos_min: number | null;
}

export interface KpiStep extends KpiFigures {
  start_ms: number;
}

export interface KpiResult {
  window: { from_ms: number; to_ms: number };
  node: number | string | null;
  step: string;
  step_ms: number;
  totals: KpiFigures;
  response_codes: Array<{ code: number | null; calls: number }>;
  series: KpiStep[];
}

/** Sums a step or the window accumulates before the ratios are taken. */
export class Acc {
  outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  regs = Object.fromEntries(REG_OUTCOMES.map((o) => [o, 0])) as Record<RegOutcome, number>;
  pdd: [number, number] = [0, 0];
  setup: [number, number] = [0, 0];
  dur: [number, number] = [0, 0];
  rtcp = 0;
  jit: [number, number, number] = [0, 0, -Infinity];
  fl: [number, number, number] = [0, 0, -Infinity];
  mos: [number, number, number] = [0, 0, Infinity];

  /** Adds `o` (another step, or the same step of another node): sums add, maxima and minima fold. */
  add(o: Acc): void {
    for (const k of OUTCOMES) this.outcomes[k] += o.outcomes[k];
    for (const k of REG_OUTCOMES) this.regs[k] += o.regs[k];
    const sum2 = (a: [number, number], b: readonly number[]) => {
      a[0] += b[0]!;
      a[1] += b[1]!;
    };
    sum2(this.pdd, o.pdd);
    sum2(this.setup, o.setup);
    sum2(this.dur, o.dur);
    this.rtcp += o.rtcp;
    this.jit = [this.jit[0] + o.jit[0], this.jit[1] + o.jit[1], Math.max(this.jit[2], o.jit[2])];
    this.fl = [this.fl[0] + o.fl[0], this.fl[1] + o.fl[1], Math.max(this.fl[2], o.fl[2])];
    this.mos = [this.mos[0] + o.mos[0], this.mos[1] + o.mos[1], Math.min(this.mos[2], o.mos[2])];
  }

  toJson(): KpiAccJson {
    const fin = (v: number) => (Number.isFinite(v) ? v : null);
    return {
      outcomes: { ...this.outcomes },
      regs: { ...this.regs },
      pdd: [...this.pdd],
      setup: [...this.setup],
      dur: [...this.dur],
      rtcp: this.rtcp,
      jit: this.jit.map(fin),
      fl: this.fl.map(fin),
      mos: this.mos.map(fin),
    };
  }

  static fromJson(j: KpiAccJson): Acc {
    const a = new Acc();
    for (const k of OUTCOMES) a.outcomes[k] = n(j.outcomes[k]);
    for (const k of REG_OUTCOMES) a.regs[k] = n(j.regs[k]);
    a.pdd = [n(j.pdd[0]), n(j.pdd[1])];
    a.setup = [n(j.setup[0]), n(j.setup[1])];
    a.dur = [n(j.dur[0]), n(j.dur[1])];
    a.rtcp = n(j.rtcp);
    const or = (v: number | null | undefined, d: number) => (v === null || v === undefined ? d : Number(v));
    a.jit = [n(j.jit[0]), n(j.jit[1]), or(j.jit[2], -Infinity)];
    a.fl = [n(j.fl[0]), n(j.fl[1]), or(j.fl[2], -Infinity)];
    a.mos = [n(j.mos[0]), n(j.mos[1]), or(j.mos[2], Infinity)];
    return a;
  }

  figures(): KpiFigures {
    const o = this.outcomes;
    const attempts = OUTCOMES.reduce((s, k) => s + o[k], 0);
    const completed = attempts - o.pending;
    const ratio = (n: number, d: number) => (d > 0 ? n / d : null);
    const mean = ([sum, n]: readonly number[], scale: number) => (n! > 0 ? sum! / n! / scale : null);
    const r = this.regs;
    return {
      attempts,
      outcomes: { ...o },
      asr: ratio(o.answered, completed),
      ner: ratio(
        NER_OUTCOMES.reduce((s, k) => s + o[k], 0),
        completed,
      ),
      acd_s: mean(this.dur, 1e6),
      pdd_ms: mean(this.pdd, 1e3),
      setup_ms: mean(this.setup, 1e3),
      registrations: { ...r },
      registration_success_ratio: ratio(r.success, r.success + r.failed + r.no_response),
      rtcp_reports: this.rtcp,
      // RTCP jitter is in RTP timestamp units; 8 kHz (G.711/G.729/G.722 RTP clock) → 8 units per ms.
      jitter_ms_avg: mean(this.jit, 8),
      jitter_ms_max: this.jit[1]! > 0 ? this.jit[2]! / 8 : null,
      loss_pct_avg: mean(this.fl, 2.56),
      loss_pct_max: this.fl[1]! > 0 ? this.fl[2]! / 2.56 : null,
      mos_avg: mean(this.mos, 1),
      mos_min: this.mos[1]! > 0 ? this.mos[2]! : null,
    };
  }
}

/** A SQL sum or count as a number (NULL of an empty group is 0). */
export const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
