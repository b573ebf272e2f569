/**
 * A small Prometheus registry (text exposition format 0.0.4). Modules register their metrics once
 * at creation; the coordinator serves `registry.renderFresh()` on /metrics. Counter names end in
 * `_total` and units are in names so `promtool check metrics` passes.
 */
type Labels = Record<string, string>;

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  render(out: string[]): void;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function labelKey(labelNames: readonly string[], labels: Labels | undefined): string {
  if (labelNames.length === 0) return "";
  return labelNames.map((n) => `${n}="${escapeLabel(labels?.[n] ?? "")}"`).join(",");
}

/**
 * Rendered label keys, memoised: metrics are updated per packet on the ingest path, where building
 * `name="value"` strings each time cost a fifth of the pipeline's CPU. Label values are few
 * (transports, protocol ids, table names, reasons), so the cache stays small.
 */
class LabelKeys {
  private readonly one = new Map<string, string>();
  private readonly many = new Map<string, string>();
  constructor(private readonly names: readonly string[]) {}
  key(labels: Labels | undefined): string {
    const names = this.names;
    if (names.length === 0) return "";
    if (names.length === 1) {
      const v = labels?.[names[0]!] ?? "";
      let k = this.one.get(v);
      if (k === undefined) {
        k = labelKey(names, labels);
        this.one.set(v, k);
      }
      return k;
    }
    const raw = names.map((n) => labels?.[n] ?? "").join("\u0000");
    let k = this.many.get(raw);
    if (k === undefined) {
      k = labelKey(names, labels);
      this.many.set(raw, k);
    }
    return k;
  }
}

const fmt = (v: number) => (Number.isFinite(v) ? String(v) : v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN");

/** One value per label combination: what a counter and a gauge share (update, read, render). */
abstract class ValueMetric<L extends string> implements Metric {
  abstract readonly type: "counter" | "gauge";
  protected readonly values = new Map<string, number>();
  protected readonly keys: LabelKeys;
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[] = [],
  ) {
    this.keys = new LabelKeys(labelNames);
  }
  inc(labels?: Partial<Record<L, string>>, by = 1): void {
    const k = this.keys.key(labels as Labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels?: Partial<Record<L, string>>): number {
    return this.values.get(this.keys.key(labels as Labels)) ?? 0;
  }
  render(out: string[]): void {
    if (this.values.size === 0 && this.labelNames.length === 0) out.push(`${this.name} 0`);
    for (const [k, v] of this.values) out.push(k ? `${this.name}{${k}} ${fmt(v)}` : `${this.name} ${fmt(v)}`);
  }
}

export class Counter<L extends string = string> extends ValueMetric<L> {
  readonly type = "counter" as const;
  /** For collectors that read an already-monotonic total from elsewhere (CPU time, kernel drops). */
  setTotal(value: number, labels?: Partial<Record<L, string>>): void {
    this.values.set(this.keys.key(labels as Labels), value);
  }
  /** Every series as [rendered label key, value] (for handing counts to another thread). */
  series(): IterableIterator<[string, number]> {
    return this.values.entries();
  }
  /** Adds to the series of a rendered label key (from `series()` of the same counter elsewhere). */
  incSeries(key: string, by: number): void {
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  /** Sum over every label combination. */
  total(): number {
    let s = 0;
    for (const v of this.values.values()) s += v;
    return s;
  }
}

export class Gauge<L extends string = string> extends ValueMetric<L> {
  readonly type = "gauge" as const;
  set(value: number, labels?: Partial<Record<L, string>>): void {
    this.values.set(this.keys.key(labels as Labels), value);
  }
}

export class Histogram<L extends string = string> implements Metric {
  readonly type = "histogram" as const;
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    readonly labelNames: readonly L[] = [],
  ) {
    this.keys = new LabelKeys(labelNames);
  }
  private readonly keys: LabelKeys;
  observe(value: number, labels?: Partial<Record<L, string>>): void {
    const k = this.keys.key(labels as Labels);
    let s = this.series.get(k);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(k, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  count(labels?: Partial<Record<L, string>>): number {
    return this.series.get(this.keys.key(labels as Labels))?.count ?? 0;
  }
  render(out: string[]): void {
    for (const [k, s] of this.series) {
      const pre = k ? `${k},` : "";
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket{${pre}le="${fmt(b)}"} ${s.counts[i]}`));
      out.push(`${this.name}_bucket{${pre}le="+Inf"} ${s.count}`);
      out.push(k ? `${this.name}_sum{${k}} ${fmt(s.sum)}` : `${this.name}_sum ${fmt(s.sum)}`);
      out.push(k ? `${this.name}_count{${k}} ${s.count}` : `${this.name}_count ${s.count}`);
    }
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors: Array<() => void> = [];
  private readonly asyncCollectors: Array<() => Promise<void>> = [];

  /** Runs before every render, for values read on demand (queue depth, RSS, file counts). */
  onCollect(fn: () => void): void {
    this.collectors.push(fn);
  }

  /** Awaited by `renderFresh` before rendering, for values a query computes (call KPIs, docs/KPIS.md). */
  onCollectAsync(fn: () => Promise<void>): void {
    this.asyncCollectors.push(fn);
  }

  /** `render()` after every async collector has finished (one failing collector keeps its old values). */
  async renderFresh(): Promise<string> {
    await Promise.allSettled(this.asyncCollectors.map((fn) => fn()));
    return this.render();
  }

  private add<M extends Metric>(m: M): M {
    const existing = this.metrics.get(m.name);
    if (existing) {
      if (existing.type !== m.type) throw new Error(`metric ${m.name} registered twice with different types`);
      return existing as M;
    }
    this.metrics.set(m.name, m);
    return m;
  }
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.add(new Counter<L>(name, help, labelNames));
  }
  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return this.add(new Gauge<L>(name, help, labelNames));
  }
  histogram<L extends string = never>(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly L[] = [],
  ): Histogram<L> {
    return this.add(new Histogram<L>(name, help, buckets, labelNames));
  }
  /**
   * What every counter gained since the last call with the same `last` map, as [name, label key,
   * delta]: a thread with its own registry reports its counts to the main one this way.
   */
  counterDeltas(last: Map<string, number>): Array<[string, string, number]> {
    const out: Array<[string, string, number]> = [];
    for (const m of this.metrics.values()) {
      if (!(m instanceof Counter)) continue;
      for (const [key, v] of m.series()) {
        const id = `${m.name}\u0000${key}`;
        const d = v - (last.get(id) ?? 0);
        if (d !== 0) {
          out.push([m.name, key, d]);
          last.set(id, v);
        }
      }
    }
    return out;
  }

  /** Adds deltas from `counterDeltas` of another registry; counters not registered here are skipped. */
  applyCounterDeltas(deltas: ReadonlyArray<readonly [string, string, number]>): void {
    for (const [name, key, d] of deltas) {
      const m = this.metrics.get(name);
      if (m instanceof Counter) m.incSeries(key, d);
    }
  }

  /** Sum of a counter over all its label combinations (0 when not registered). */
  sumOf(name: string): number {
    const m = this.metrics.get(name);
    return m instanceof Counter ? m.total() : 0;
  }

  render(): string {
    for (const fn of this.collectors) fn();
    const out: string[] = [];
    for (const m of this.metrics.values()) {
      out.push(`# HELP ${m.name} ${m.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
      out.push(`# TYPE ${m.name} ${m.type}`);
      m.render(out);
    }
    return out.join("\n") + "\n";
  }
}

export const DURATION_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Process metrics in the names Prometheus client libraries use. */
export function registerProcessMetrics(reg: MetricsRegistry, version: string): void {
  const start = Date.now() / 1000;
  reg.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.").set(start);
  const rss = reg.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  const heap = reg.gauge("process_heap_bytes", "JavaScript heap in use in bytes.");
  const cpu = reg.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  reg.onCollect(() => {
    rss.set(process.memoryUsage.rss());
    heap.set(process.memoryUsage().heapUsed);
    const u = process.cpuUsage();
    cpu.setTotal((u.user + u.system) / 1e6);
  });
  reg.gauge("svc_build_info", "Build information; the value is always 1.", ["version"]).set(1, { version });
}

/**
 * `svc_lake_rows_lost_total{reason}`: rows that could not be stored. Counted by the lake writer,
 * the ingest thread and its host, read by /health; one definition so the help text cannot drift.
 */
export function rowsLostCounter(reg: MetricsRegistry): Counter<"reason"> {
  return reg.counter("svc_lake_rows_lost_total", "Rows that could not be stored, per reason.", ["reason"]);
}
