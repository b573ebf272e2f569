import { AppError, bucketGrid, bucketLabel, chooseBucketWidth, MAX_BUCKETS, parseBucketWidth, type BucketGrid } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { callMedia, callMediaJson } from "../search/call-media.ts";
import { codeCounts, rankDestinations, type DestinationCounts, type FailingDestination } from "./destinations.ts";

export type { FailingDestination } from "./destinations.ts";
import {
  callBucketsSql,
  callMediaMessagesSql,
  failingDestinationsSql,
  FAILURE_OUTCOMES,
  mosBucketsSql,
  NER_OUTCOMES,
  OUTCOMES,
  Params,
  registrationBucketsSql,
  rtcpBucketsSql,
  uncorrelatedReportsSql,
  type Outcome,
  type Scope,
} from "./sql.ts";
import { hepTableKey } from "../../core/protocols.ts";

const CALLS = hepTableKey(1, "call");
const REGISTRATIONS = hepTableKey(1, "registration");
const RTCP = hepTableKey(5);
const AGENT_REPORTS = hepTableKey(34);

/**
 * Call-quality KPIs over a window and a capture node (docs/KPIS.md): series per time step and
 * totals over the window, from the HEP SIP call and registration tables, RTCP (HEP 5) and RTP
 * agent reports (HEP 34).
 */
export interface KpiRequest {
  fromMs: number;
  toMs: number;
  /** `30s`, `5m`, `1h`; absent: chosen from the window (about 60 steps). */
  step?: string;
  node?: number | string;
  /** Minutes east of UTC the steps are aligned in (1d steps start at local midnight). */
  utcOffsetMin?: number;
  /** Only rows not yet in data files: a node whose lake another node answers for (docs/ARCHITECTURE.md "Reads over several nodes"). */
  bufferOnly?: boolean;
}

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

/** A lake's KPI sums per step and its final-response counts: what a node answers a coordinator. */
export interface KpiPartial {
  steps: KpiAccJson[];
  codes: Array<[number | null, number]>;
}

/** Responses and BYEs are read this long after the window's end (docs/KPIS.md "Classifying a call"). */
export const END_GRACE_MS = 3_600_000;
/** An INVITE without final response for longer than this is `no_response` (RFC 3261 Timer C is > 3 min). */
export const INVITE_PENDING_MS = 180_000;
/** A REGISTER without final response for longer than this is `no_response` (Timer F, 64 × T1 = 32 s). */
export const REGISTER_PENDING_MS = 32_000;
/** Steps the window is cut into when no step is given. */
export const TARGET_STEPS = 60;
export const MAX_DESTINATIONS = 100;

export const REG_OUTCOMES = ["success", "challenged", "failed", "no_response", "pending"] as const;
type RegOutcome = (typeof REG_OUTCOMES)[number];

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
class Acc {
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

const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

export class KpiService {
  constructor(
    private readonly lake: Lake,
    private readonly timeoutMs: number,
  ) {}

  static grid(req: Pick<KpiRequest, "fromMs" | "toMs" | "step" | "utcOffsetMin">): BucketGrid {
    let w = chooseBucketWidth(req.toMs - req.fromMs, TARGET_STEPS);
    if (req.step !== undefined) {
      const p = parseBucketWidth(req.step);
      if (!p.ok) throw new AppError("VALIDATION", `step: ${p.detail}`, { details: { fields: ["step"] } });
      w = p.value;
    }
    const grid = bucketGrid(req.fromMs, req.toMs, w.ms, (req.utcOffsetMin ?? 0) * 60_000);
    if (grid.count > MAX_BUCKETS) {
      throw new AppError("VALIDATION", `step: ${w.label} over this window gives ${grid.count} steps, at most ${MAX_BUCKETS}: choose a wider step or leave it out`, { details: { fields: ["step"] } });
    }
    return grid;
  }

  private has(key: string): boolean {
    return this.lake.tables().some((d) => `${d.schema}.${d.name}` === key);
  }

  private async scope(key: string, req: KpiRequest, pendingMs: number, now: number, graceMs: number): Promise<Scope> {
    const scanEndMs = Math.max(req.toMs, Math.min(req.toMs + graceMs, now));
    return {
      scan: await this.lake.scanSql(key, { fromUs: req.fromMs * 1000, toUs: scanEndMs * 1000, ...(req.bufferOnly ? { files: false as const, buffer: true } : {}) }),
      fromUs: req.fromMs * 1000,
      toUs: req.toMs * 1000,
      scanEndUs: scanEndMs * 1000,
      pendingAfterUs: (scanEndMs - pendingMs) * 1000,
      ...(req.node !== undefined ? { node: req.node } : {}),
    };
  }

  private async rows(sql: string, p: Params) {
    return (await this.lake.query(sql, p.values as never, { timeoutMs: this.timeoutMs, narrowHint: "narrow the time window or choose a node" })).rows;
  }

  async run(req: KpiRequest, now = Date.now()): Promise<KpiResult> {
    const grid = KpiService.grid(req);
    return KpiService.result(req, grid, [await this.partial(req, now, grid)]);
  }

  /**
   * The KPIs of several lakes' partials (one lake, or every node of coordinator.nodes): each
   * step's sums and counts add, maxima and minima fold, and the ratios and means are taken once
   * over the sums — so they equal one lake's holding every call, not an average of averages.
   */
  static result(req: KpiRequest, grid: BucketGrid, parts: readonly KpiPartial[]): KpiResult {
    const steps = Array.from({ length: grid.count }, () => new Acc());
    const codes = new Map<number | null, number>();
    for (const p of parts) {
      if (p.steps.length !== grid.count) throw new AppError("INTERNAL", `KPI partial of ${p.steps.length} steps, expected ${grid.count}`);
      p.steps.forEach((j, i) => steps[i]!.add(Acc.fromJson(j)));
      for (const [code, calls] of p.codes) codes.set(code, (codes.get(code) ?? 0) + calls);
    }
    const total = new Acc();
    for (const s of steps) total.add(s);
    return {
      window: { from_ms: req.fromMs, to_ms: req.toMs },
      node: req.node ?? null,
      step: bucketLabel(grid.widthMs),
      step_ms: grid.widthMs,
      totals: total.figures(),
      response_codes: [...codes].map(([code, calls]) => ({ code, calls })).sort((a, b) => (a.code ?? 1000) - (b.code ?? 1000)),
      series: steps.map((s, i) => ({ start_ms: grid.originMs + i * grid.widthMs, ...s.figures() })),
    };
  }

  /** This lake's sums per step and its final-response counts (`now`: the coordinator's, so every node classifies alike). */
  async partial(req: KpiRequest, now = Date.now(), grid = KpiService.grid(req)): Promise<KpiPartial> {
    const g = { originUs: grid.originMs * 1000, widthUs: grid.widthMs * 1000, last: grid.count - 1 };
    const steps = Array.from({ length: grid.count }, () => new Acc());
    const codes = new Map<number | null, number>();
    const each = (b: unknown, fn: (a: Acc) => void) => {
      const step = steps[n(b)];
      if (!step) throw new AppError("INTERNAL", `KPI step ${String(b)} outside 0..${grid.count - 1}`);
      fn(step);
    };
    const tasks: Array<() => Promise<void>> = [];
    if (this.has(CALLS)) {
      const p = new Params();
      const sql = callBucketsSql(p, await this.scope(CALLS, req, INVITE_PENDING_MS, now, END_GRACE_MS), g);
      tasks.push(() =>
        this.rows(sql, p).then((rows) => {
          for (const r of rows) {
            const outcome = String(r.outcome) as Outcome;
            const code = r.final_code === null || r.final_code === undefined ? null : Number(r.final_code);
            if (outcome !== "pending") codes.set(code, (codes.get(code) ?? 0) + n(r.n));
            each(r.b, (a) => {
              a.outcomes[outcome] += n(r.n);
              a.pdd[0] += n(r.pdd_sum);
              a.pdd[1] += n(r.pdd_n);
              a.setup[0] += n(r.setup_sum);
              a.setup[1] += n(r.setup_n);
              a.dur[0] += n(r.dur_sum);
              a.dur[1] += n(r.dur_n);
            });
          }
        }),
      );
    }
    if (this.has(REGISTRATIONS)) {
      const p = new Params();
      const sql = registrationBucketsSql(p, await this.scope(REGISTRATIONS, req, REGISTER_PENDING_MS, now, REGISTER_PENDING_MS * 2), g);
      tasks.push(() => this.rows(sql, p).then((rows) => rows.forEach((r) => each(r.b, (a) => (a.regs[String(r.outcome) as RegOutcome] += n(r.n))))));
    }
    // RTCP and MOS of the window's calls (docs/KPIS.md "RTCP and MOS"): reports are read as long
    // after the window as the calls' BYEs are, and belong to a call by the call view's rule.
    const reportKeys = [RTCP, AGENT_REPORTS].filter((k) => this.has(k));
    if (this.has(CALLS) && reportKeys.length > 0) {
      const callScope = await this.scope(CALLS, req, INVITE_PENDING_MS, now, END_GRACE_MS);
      const reportScope = (key: string) => this.scope(key, req, 0, now, END_GRACE_MS);
      let mediaJson: string | undefined;
      const media = async () => (mediaJson ??= await this.callMediaJson(await Promise.all(reportKeys.map(reportScope)), callScope));
      if (reportKeys.includes(RTCP)) {
        tasks.push(async () => {
          const p = new Params();
          const sql = rtcpBucketsSql(p, await reportScope(RTCP), callScope, await media(), g);
          for (const r of await this.rows(sql, p)) {
            each(r.b, (a) => {
              a.rtcp += n(r.reports);
              a.jit = [a.jit[0]! + n(r.jit_sum), a.jit[1]! + n(r.jit_n), r.jit_n ? Math.max(a.jit[2]!, n(r.jit_max)) : a.jit[2]!];
              a.fl = [a.fl[0]! + n(r.fl_sum), a.fl[1]! + n(r.fl_n), r.fl_n ? Math.max(a.fl[2]!, n(r.fl_max)) : a.fl[2]!];
            });
          }
        });
      }
      if (reportKeys.includes(AGENT_REPORTS)) {
        tasks.push(async () => {
          const p = new Params();
          const sql = mosBucketsSql(p, await reportScope(AGENT_REPORTS), callScope, await media(), g);
          for (const r of await this.rows(sql, p)) each(r.b, (a) => (a.mos = [a.mos[0]! + n(r.mos_sum), a.mos[1]! + n(r.mos_n), Math.min(a.mos[2]!, n(r.mos_min))]));
        });
      }
    }
    // One statement at a time in the engine: a KPI request never holds more than one reader.
    for (const t of tasks) await t();
    return { steps: steps.map((a) => a.toJson()), codes: [...codes] };
  }

  /**
   * The calls' negotiated address pairs and media spans (callMediaJson) for the address half of
   * the rule; read from the SIP messages' SDP only when some report in `reports` has no
   * correlation id (heplify and loadgen set one; the SDP of a busy hour is many rows).
   */
  private async callMediaJson(reports: Scope[], calls: Scope): Promise<string> {
    let uncorrelated = false;
    for (const s of reports) {
      const p = new Params();
      const sql = uncorrelatedReportsSql(p, s);
      if (n((await this.rows(sql, p))[0]?.n) > 0) uncorrelated = true;
    }
    if (!uncorrelated) return "[]";
    const p = new Params();
    const sql = callMediaMessagesSql(p, calls);
    const rows = (await this.rows(sql, p)).map((r) => ({ session_id: String(r.session_id), timestamp_us: Number(r.timestamp_us), payload: String(r.payload ?? "") }));
    return callMediaJson(callMedia(rows, [...new Set(rows.map((r) => r.session_id))], calls.scanEndUs));
  }

  /**
   * Per destination the counts the top failing destinations are made of (destinations.ts): the
   * `limit` with most failures, or (`everyDestination`, a node's answer to a coordinator) every
   * destination with a completed call, at most `limit`.
   */
  async destinationCounts(req: Omit<KpiRequest, "step">, limit: number, everyDestination = false, now = Date.now()): Promise<DestinationCounts[]> {
    if (!this.has(CALLS)) return [];
    const p = new Params();
    const sql = failingDestinationsSql(p, await this.scope(CALLS, req, INVITE_PENDING_MS, now, END_GRACE_MS), limit, everyDestination);
    return (await this.rows(sql, p)).map((r) => ({
      destination: String(r.destination),
      attempts: n(r.attempts),
      failures: n(r.failures),
      answered: n(r.answered),
      no_response: n(r.no_response),
      codes: codeCounts(r.codes),
    }));
  }

  async failingDestinations(req: Omit<KpiRequest, "step">, limit: number, now = Date.now()): Promise<FailingDestination[]> {
    return rankDestinations([await this.destinationCounts(req, limit, false, now)], limit);
  }
}

export { FAILURE_OUTCOMES, NER_OUTCOMES, OUTCOMES };
