/**
 * Engine statistics (docs/LOADGEN.md "Statistics"): the object `GET /api/v1/stats` returns, the
 * `summary_json` file holds and the periodic `stat_period` line prints.
 */

export interface LoadgenStats {
  scenario: string;
  mode: "load" | "management";
  elapsed_ms: number;
  rate: number;
  rate_period_ms: number;
  paused: boolean;
  calls_created: number;
  calls_current: number;
  /** Highest calls_current seen (what `-l` caps). */
  calls_peak: number;
  calls_successful: number;
  calls_failed: number;
  /** Failed calls by reason ("timeout", "status 486", "no ACK", "auth", …). */
  failed_reasons: Record<string, number>;
  retransmissions: number;
  messages_sent: number;
  messages_received: number;
  unexpected_messages: number;
  auth_challenges: number;
  /** Stream connections that broke or carried something that is not SIP; UDP socket errors (ICMP port unreachable). */
  transport_errors: number;
  /** Out-of-dialog requests a UAS answered (OPTIONS, REGISTER, …). */
  requests_answered: number;
  /** Mean time from the first request of a call to its final response (ms). */
  response_time_ms_avg: number;
  hep_sent: number;
  /** OTLP log batches the collector did not accept. */
  log_export_errors: number;
  /** Scenario `counter="name"` attributes: how many times each such step ran (docs/LOADGEN.md "Scenario actions and variables"). */
  counters: Record<string, number>;
  /** Scenario response-time markers (`start_rtd` → `rtd`): measurements and their mean, by timer name. */
  rtd: Record<string, { count: number; avg_ms: number }>;
}

export function emptyStats(
  scenario: string,
  mode: "load" | "management",
  rate: number,
  ratePeriodMs: number,
): LoadgenStats {
  return {
    scenario,
    mode,
    elapsed_ms: 0,
    rate,
    rate_period_ms: ratePeriodMs,
    paused: false,
    calls_created: 0,
    calls_current: 0,
    calls_peak: 0,
    calls_successful: 0,
    calls_failed: 0,
    failed_reasons: {},
    retransmissions: 0,
    messages_sent: 0,
    messages_received: 0,
    unexpected_messages: 0,
    auth_challenges: 0,
    transport_errors: 0,
    requests_answered: 0,
    response_time_ms_avg: 0,
    hep_sent: 0,
    log_export_errors: 0,
    counters: {},
    rtd: {},
  };
}

/** A copy for readers (the control API, summary_json): maps copied, rtd averages rounded to 0.1 ms. */
export function copyStats(s: LoadgenStats): LoadgenStats {
  const rtd = Object.fromEntries(
    Object.entries(s.rtd).map(([k, v]) => [k, { count: v.count, avg_ms: Math.round(v.avg_ms * 10) / 10 }]),
  );
  return { ...s, failed_reasons: { ...s.failed_reasons }, counters: { ...s.counters }, rtd };
}

/** One line for the terminal every `stat_period`. */
export function statsLine(s: LoadgenStats, id = ""): string {
  const who = id ? `[${id}] ` : "";
  const reasons = Object.entries(s.failed_reasons)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return (
    `loadgen ${who}${(s.elapsed_ms / 1000).toFixed(1)}s ${s.scenario}: created=${s.calls_created} current=${s.calls_current} ` +
    `ok=${s.calls_successful} failed=${s.calls_failed}${reasons ? ` (${reasons})` : ""} retrans=${s.retransmissions} ` +
    `sent=${s.messages_sent} recv=${s.messages_received} rate=${s.rate}/${s.rate_period_ms}ms${s.paused ? " paused" : ""}`
  );
}
