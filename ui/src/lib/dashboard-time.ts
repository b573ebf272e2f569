/**
 * The one dashboard time range and the display zone (docs/UI.md "Time range"), kept in the address
 * (`?from=now-15m&to=now&tz=utc`, so a copied link opens the same range) and in localStorage (a new
 * tab without parameters opens the last range used). Widgets follow the range unless their config
 * holds their own (`config.time_range`, saved with the dashboard layout).
 */
import { setFormatZone } from "./format.ts";
import { createStore, useStore, type Store } from "./store.ts";
import {
  DEFAULT_RANGE,
  parseRangeParams,
  rangeToParams,
  resolveRange,
  type TimeRange,
  type Zone,
} from "./time-range.ts";

const STORAGE_KEY = "svc.timeRange";

interface Initial {
  range: TimeRange;
  zone: Zone;
  /** Set when the address carried a range that could not be read (shown once as a notice). */
  notice?: string;
}

function readInitial(): Initial {
  if (typeof location === "undefined") return { range: DEFAULT_RANGE, zone: "local" };
  const q = new URLSearchParams(location.search);
  let stored: { from?: string; to?: string; tz?: string } = {};
  try {
    stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "{}") as typeof stored;
  } catch {
    // a damaged entry is ignored: the default range applies
  }
  const tzParam = q.get("tz") ?? stored.tz;
  const zone: Zone = tzParam === "utc" ? "utc" : "local";
  // A deep link (`?call_id=…&from=<ms>&to=<ms>`) sets its own range when its search runs.
  if (q.has("from") && !q.has("call_id")) {
    const p = parseRangeParams(q.get("from"), q.get("to"));
    if (p.ok) return { range: p.range, zone };
    return {
      range: DEFAULT_RANGE,
      zone,
      notice: `The time range in the address was not used (${p.error}); showing the last hour.`,
    };
  }
  const s = parseRangeParams(stored.from, stored.to);
  return { range: s.ok ? s.range : DEFAULT_RANGE, zone };
}

const initial = readInitial();
let notice = initial.notice;
/** The sentence about an unreadable range in the address, once (the dashboard shows it as a notice). */
export function takeRangeNotice(): string | undefined {
  const n = notice;
  notice = undefined;
  return n;
}
export const timeRange: Store<TimeRange> = createStore<TimeRange>(initial.range);
export const displayZone: Store<Zone> = createStore<Zone>(initial.zone);
setFormatZone(initial.zone);

function persist(): void {
  if (typeof location === "undefined") return;
  const p = rangeToParams(timeRange.get());
  const zone = displayZone.get();
  const q = new URLSearchParams(location.search);
  q.set("from", p.from);
  q.set("to", p.to);
  if (zone === "utc") q.set("tz", "utc");
  else q.delete("tz");
  history.replaceState(history.state, "", `${location.pathname}?${q}${location.hash}`);
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ ...p, tz: zone }));
  } catch {
    // storage full or disabled: the address still carries the range
  }
}
timeRange.subscribe(persist);
displayZone.subscribe((z) => {
  setFormatZone(z);
  persist();
});

/** A widget's own range from its config, when it has one. */
export function ownRange(config: Record<string, unknown> | undefined): TimeRange | undefined {
  const t = config?.time_range as { from?: unknown; to?: unknown } | undefined;
  if (!t || typeof t.from !== "string") return undefined;
  const p = parseRangeParams(t.from, typeof t.to === "string" ? t.to : "now");
  return p.ok ? p.range : undefined;
}

/** The config with the widget's own range set (or removed with `undefined`: it follows the dashboard again). */
export function withOwnRange(
  config: Record<string, unknown> | undefined,
  r: TimeRange | undefined,
): Record<string, unknown> {
  const { time_range: _old, ...rest } = config ?? {};
  return r ? { ...rest, time_range: rangeToParams(r) } : rest;
}

/** The range a widget searches: its own, else the dashboard's. */
export function effectiveRange(config: Record<string, unknown> | undefined): TimeRange {
  return ownRange(config) ?? timeRange.get();
}

/** Epoch ms of the range a widget searches, resolved now in the display zone. */
export function resolveWidgetRange(
  config: Record<string, unknown> | undefined,
  now = Date.now(),
): { from: number; to: number } {
  return resolveRange(effectiveRange(config), now, displayZone.get());
}

/** Changes exactly when the range a widget searches does (its own, or the dashboard's it follows). */
export function rangeKey(config: Record<string, unknown> | undefined): string {
  const r = effectiveRange(config);
  const p = rangeToParams(r);
  return `${p.from}|${p.to}${r.kind === "today" || r.kind === "yesterday" ? `|${displayZone.get()}` : ""}`;
}

/** `rangeKey`, re-rendering the widget on every change of the dashboard range or the zone. */
export function useRangeKey(config: Record<string, unknown> | undefined): string {
  useStore(timeRange);
  useStore(displayZone);
  return rangeKey(config);
}
