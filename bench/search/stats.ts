/** Latency summaries for the benchmark reports: nearest-rank percentiles (no interpolation). */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile: the smallest sample with at least p % of the samples at or below it. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p <= 0) return Math.min(...samples);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  return {
    n,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    max: n ? Math.max(...samples) : Number.NaN,
    mean: n ? samples.reduce((a, b) => a + b, 0) / n : Number.NaN,
  };
}
