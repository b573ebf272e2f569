import {
  AppError,
  bucketGrid,
  bucketLabel,
  chooseBucketWidth,
  MAX_BUCKETS,
  parseBucketWidth,
  type BucketGrid,
} from "../../core/index.ts";
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
import { Acc, type KpiAccJson, type KpiResult, n, type RegOutcome } from "./figures.ts";

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
      throw new AppError(
        "VALIDATION",
        `step: ${w.label} over this window gives ${grid.count} steps, at most ${MAX_BUCKETS}: choose a wider step or leave it out`,
        { details: { fields: ["step"] } },
      );
    }
    return grid;
  }

  private has(key: string): boolean {
    return this.lake.tables().some((d) => `${d.schema}.${d.name}` === key);
  }

  private async scope(key: string, req: KpiRequest, pendingMs: number, now: number, graceMs: number): Promise<Scope> {
    const scanEndMs = Math.max(req.toMs, Math.min(req.toMs + graceMs, now));
    return {
      scan: await this.lake.scanSql(key, {
        fromUs: req.fromMs * 1000,
        toUs: scanEndMs * 1000,
        ...(req.bufferOnly ? { files: false as const, buffer: true } : {}),
      }),
      fromUs: req.fromMs * 1000,
      toUs: req.toMs * 1000,
      scanEndUs: scanEndMs * 1000,
      pendingAfterUs: (scanEndMs - pendingMs) * 1000,
      ...(req.node !== undefined ? { node: req.node } : {}),
    };
  }

  private async rows(sql: string, p: Params) {
    return (
      await this.lake.query(sql, p.values as never, {
        timeoutMs: this.timeoutMs,
        narrowHint: "narrow the time window or choose a node",
      })
    ).rows;
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
      if (p.steps.length !== grid.count)
        throw new AppError("INTERNAL", `KPI partial of ${p.steps.length} steps, expected ${grid.count}`);
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
      response_codes: [...codes]
        .map(([code, calls]) => ({ code, calls }))
        .sort((a, b) => (a.code ?? 1000) - (b.code ?? 1000)),
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
      const sql = registrationBucketsSql(
        p,
        await this.scope(REGISTRATIONS, req, REGISTER_PENDING_MS, now, REGISTER_PENDING_MS * 2),
        g,
      );
      tasks.push(() =>
        this.rows(sql, p).then((rows) =>
          rows.forEach((r) => each(r.b, (a) => (a.regs[String(r.outcome) as RegOutcome] += n(r.n)))),
        ),
      );
    }
    // RTCP and MOS of the window's calls (docs/KPIS.md "RTCP and MOS"): reports are read as long
    // after the window as the calls' BYEs are, and belong to a call by the call view's rule.
    const reportKeys = [RTCP, AGENT_REPORTS].filter((k) => this.has(k));
    if (this.has(CALLS) && reportKeys.length > 0) {
      const callScope = await this.scope(CALLS, req, INVITE_PENDING_MS, now, END_GRACE_MS);
      const reportScope = (key: string) => this.scope(key, req, 0, now, END_GRACE_MS);
      let mediaJson: string | undefined;
      const media = async () =>
        (mediaJson ??= await this.callMediaJson(await Promise.all(reportKeys.map(reportScope)), callScope));
      if (reportKeys.includes(RTCP)) {
        tasks.push(async () => {
          const p = new Params();
          const sql = rtcpBucketsSql(p, await reportScope(RTCP), callScope, await media(), g);
          for (const r of await this.rows(sql, p)) {
            each(r.b, (a) => {
              a.rtcp += n(r.reports);
              a.jit = [
                a.jit[0]! + n(r.jit_sum),
                a.jit[1]! + n(r.jit_n),
                r.jit_n ? Math.max(a.jit[2]!, n(r.jit_max)) : a.jit[2]!,
              ];
              a.fl = [
                a.fl[0]! + n(r.fl_sum),
                a.fl[1]! + n(r.fl_n),
                r.fl_n ? Math.max(a.fl[2]!, n(r.fl_max)) : a.fl[2]!,
              ];
            });
          }
        });
      }
      if (reportKeys.includes(AGENT_REPORTS)) {
        tasks.push(async () => {
          const p = new Params();
          const sql = mosBucketsSql(p, await reportScope(AGENT_REPORTS), callScope, await media(), g);
          for (const r of await this.rows(sql, p))
            each(
              r.b,
              (a) => (a.mos = [a.mos[0]! + n(r.mos_sum), a.mos[1]! + n(r.mos_n), Math.min(a.mos[2]!, n(r.mos_min))]),
            );
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
    const rows = (await this.rows(sql, p)).map((r) => ({
      session_id: String(r.session_id),
      timestamp_us: Number(r.timestamp_us),
      payload: String(r.payload ?? ""),
    }));
    return callMediaJson(callMedia(rows, [...new Set(rows.map((r) => r.session_id))], calls.scanEndUs));
  }

  /**
   * Per destination the counts the top failing destinations are made of (destinations.ts): the
   * `limit` with most failures, or (`everyDestination`, a node's answer to a coordinator) every
   * destination with a completed call, at most `limit`.
   */
  async destinationCounts(
    req: Omit<KpiRequest, "step">,
    limit: number,
    everyDestination = false,
    now = Date.now(),
  ): Promise<DestinationCounts[]> {
    if (!this.has(CALLS)) return [];
    const p = new Params();
    const sql = failingDestinationsSql(
      p,
      await this.scope(CALLS, req, INVITE_PENDING_MS, now, END_GRACE_MS),
      limit,
      everyDestination,
    );
    return (await this.rows(sql, p)).map((r) => ({
      destination: String(r.destination),
      attempts: n(r.attempts),
      failures: n(r.failures),
      answered: n(r.answered),
      no_response: n(r.no_response),
      codes: codeCounts(r.codes),
    }));
  }

  async failingDestinations(
    req: Omit<KpiRequest, "step">,
    limit: number,
    now = Date.now(),
  ): Promise<FailingDestination[]> {
    return rankDestinations([await this.destinationCounts(req, limit, false, now)], limit);
  }
}

export { FAILURE_OUTCOMES, NER_OUTCOMES, OUTCOMES };
