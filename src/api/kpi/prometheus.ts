import { errorMessage, type Logger, type MetricsRegistry } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { KpiFigures } from "./figures.ts";
import { KpiService } from "./service.ts";
import { OUTCOMES } from "./sql.ts";

/**
 * Call KPIs as Prometheus series (docs/KPIS.md "Prometheus"): the figures of the last `window`
 * (5 minutes), computed on scrape by the same queries as `GET /statistics/kpi` and cached for
 * `maxAgeMs`, so scrapes in quick succession (several Prometheus servers) cost one query set.
 * Labels are bounded: `window`, an outcome class or a response class; never a Call-ID or a user.
 */
export interface KpiMetricsOptions {
  windowMs?: number;
  maxAgeMs?: number;
  /** How long a scrape waits for the computation (default 3 s). */
  waitMs?: number;
  timeoutMs?: number;
  /** False while the lake starts: a scrape then computes nothing (docs/ARCHITECTURE.md "Start-up"). */
  ready?: () => boolean;
}

const label = (ms: number) =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
const val = (v: number | null, scale = 1) => (v === null ? Number.NaN : v * scale);

export function kpiMetrics(metrics: MetricsRegistry, lake: Lake, logger: Logger, opts: KpiMetricsOptions = {}): void {
  const windowMs = opts.windowMs ?? 300_000;
  const maxAgeMs = opts.maxAgeMs ?? 15_000;
  const waitMs = opts.waitMs ?? 3_000;
  const service = new KpiService(lake, opts.timeoutMs ?? 10_000);
  const w = { window: label(windowMs) };
  const g = (name: string, help: string) => metrics.gauge<"window">(name, help, ["window"]);
  const attempts = g("svc_kpi_call_attempts", "Calls whose initial INVITE was seen in the window (docs/KPIS.md).");
  const calls = metrics.gauge<"window" | "outcome">(
    "svc_kpi_calls",
    "Calls of the window per outcome class (answered, busy, no_answer, rejected, cancelled, redirected, failed, no_response, pending).",
    ["window", "outcome"],
  );
  const codes = metrics.gauge<"window" | "class">(
    "svc_kpi_final_response_calls",
    "Completed calls of the window per class of the final response of the initial INVITE (2xx..6xx, none).",
    ["window", "class"],
  );
  const asr = g(
    "svc_kpi_asr_ratio",
    "Answer-seizure ratio of the window: answered / completed attempts; NaN without calls.",
  );
  const ner = g("svc_kpi_ner_ratio", "Network effectiveness ratio (ITU-T E.425) of the window; NaN without calls.");
  const acd = g(
    "svc_kpi_acd_seconds",
    "Average call duration of answered calls of the window whose BYE was seen; NaN without one.",
  );
  const pdd = g(
    "svc_kpi_pdd_seconds",
    "Mean post-dial delay: initial INVITE to first 101..199 or 2xx; NaN without one.",
  );
  const setup = g("svc_kpi_setup_seconds", "Mean INVITE to first 2xx of answered calls; NaN without one.");
  const regs = metrics.gauge<"window" | "outcome">(
    "svc_kpi_registrations",
    "REGISTER transactions of the window per outcome (success, challenged, failed, no_response, pending).",
    ["window", "outcome"],
  );
  const regOk = g(
    "svc_kpi_registration_success_ratio",
    "REGISTER success / (success + failed + no_response) of the window; NaN without one.",
  );
  const jitter = g(
    "svc_kpi_rtcp_jitter_seconds",
    "Mean RTCP interarrival jitter of the window's calls (8 kHz clock); NaN without reports.",
  );
  const loss = g(
    "svc_kpi_rtcp_loss_ratio",
    "Mean RTCP fraction lost of the window's calls (0..1); NaN without reports.",
  );
  const mos = g("svc_kpi_mos", "Mean MOS of agent media reports of the window's calls; NaN without reports.");
  const cost = metrics.gauge(
    "svc_kpi_refresh_duration_seconds",
    "Wall time of the last KPI refresh (the queries behind the svc_kpi_ series).",
  );
  const at = metrics.gauge(
    "svc_kpi_refresh_timestamp_seconds",
    "When the svc_kpi_ series were last computed, unix seconds.",
  );
  const failures = metrics.counter(
    "svc_kpi_refresh_failures_total",
    "KPI refreshes that failed (the series keep their previous values).",
  );

  const publish = (f: KpiFigures, codeMix: Array<{ code: number | null; calls: number }>) => {
    attempts.set(f.attempts, w);
    for (const o of OUTCOMES) calls.set(f.outcomes[o], { ...w, outcome: o });
    const classes = new Map(["2xx", "3xx", "4xx", "5xx", "6xx", "none"].map((c) => [c, 0]));
    for (const c of codeMix) {
      const k = c.code === null ? "none" : `${Math.floor(c.code / 100)}xx`;
      classes.set(k, (classes.get(k) ?? 0) + c.calls);
    }
    for (const [k, v] of classes) codes.set(v, { ...w, class: k });
    asr.set(val(f.asr), w);
    ner.set(val(f.ner), w);
    acd.set(val(f.acd_s), w);
    pdd.set(val(f.pdd_ms, 1e-3), w);
    setup.set(val(f.setup_ms, 1e-3), w);
    for (const [o, n] of Object.entries(f.registrations)) regs.set(n, { ...w, outcome: o });
    regOk.set(val(f.registration_success_ratio), w);
    jitter.set(val(f.jitter_ms_avg, 1e-3), w);
    loss.set(val(f.loss_pct_avg, 1e-2), w);
    mos.set(val(f.mos_avg), w);
  };

  let last = 0;
  let running: Promise<void> | undefined;
  const refresh = async () => {
    const started = performance.now();
    const now = Date.now();
    try {
      const r = await service.run({ fromMs: now - windowMs, toMs: now, step: label(windowMs) }, now);
      publish(r.totals, r.response_codes);
      last = now;
      at.set(now / 1000);
    } catch (e) {
      failures.inc();
      logger.warn("call KPIs could not be computed for /metrics", { error: errorMessage(e) });
    } finally {
      cost.set((performance.now() - started) / 1000);
    }
  };
  // A scrape waits for a refresh at most `waitMs`; a slower one goes on and the scrape shows the
  // previous values (a scrape must answer within Prometheus's scrape_timeout, 10 s by default).
  metrics.onCollectAsync(async () => {
    if (Date.now() - last < maxAgeMs) return;
    // While the lake starts the series keep their previous values (docs/ARCHITECTURE.md "Start-up").
    if (opts.ready && !opts.ready()) return;
    running ??= refresh().finally(() => (running = undefined));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  });
}
