/**
 * State shared between widgets of a dashboard: the time range (one picker drives every search) and
 * the result channels (a search widget publishes under its id; result tables and charts read the
 * channel named in their config `source`).
 */
import { createStore, type Store } from "./store.ts";
import type { SearchBody } from "./search-body.ts";
import type { Me } from "./types.ts";

// The time range lives in its own modules (docs/UI.md "Time range"); re-exported for the widgets.
export { QUICK_RANGES, resolveRange, type TimeRange } from "./time-range.ts";
export { displayZone, timeRange } from "./dashboard-time.ts";

export interface ResultRow extends Record<string, unknown> {
  uuid?: string;
  session_id?: string;
  timestamp_us?: number;
  event?: string;
}

export interface SearchState {
  status: "idle" | "loading" | "done" | "error";
  items: ResultRow[];
  keys: string[];
  error?: string;
  request?: SearchBody;
  tookMs?: number;
  /** `meta.pagination` of the last page read (total, has_more, next_cursor); see widgets/result-limit.ts. */
  pagination?: SearchPagination;
  /** `meta.nodes` of a coordinator over several nodes: what each node did (docs/ARCHITECTURE.md "Coordinator over several nodes"). */
  nodes?: NodeReport[];
  /** `meta.partial`: some node failed or timed out, its rows are missing. */
  partial?: boolean;
  /** A "Load more" in flight or failed (the rows already shown stay). */
  more?: { status: "loading" | "error"; error?: string };
  /** Increments with every completed search, so views reset paging. */
  seq: number;
}

/** One entry of `meta.nodes`. */
export interface NodeReport {
  name: string;
  status: "ok" | "failed" | "timeout" | "skipped";
  rows: number;
  ms: number;
  error?: string;
}

/** `meta.pagination` of the search lists (docs/ARCHITECTURE.md "Totals and paging of the search lists"). */
export interface SearchPagination {
  limit: number;
  offset: number;
  total: number;
  total_exact: boolean;
  has_more: boolean;
  next_cursor: string | null;
}

const channels = new Map<string, Store<SearchState>>();

export function channel(name: string): Store<SearchState> {
  let s = channels.get(name);
  if (!s) {
    s = createStore<SearchState>({ status: "idle", items: [], keys: [], seq: 0 });
    channels.set(name, s);
  }
  return s;
}

/** Opens the transaction window for a row (the shell renders it). */
export interface OpenTransaction {
  sessionIds: string[];
  protoType: number;
  eventType: string;
  from: number;
  to: number;
  title: string;
}

export const openTransaction: Store<OpenTransaction | null> = createStore<OpenTransaction | null>(null);

/** `/?call_id=...&from=...&to=...` (docs/DASHBOARD.md "Deep links": they open the search with results). */
export interface DeepLink {
  callId: string;
  from?: number;
  to?: number;
}

export function parseDeepLink(search: string): DeepLink | undefined {
  const q = new URLSearchParams(search);
  const callId = q.get("call_id") ?? q.get("callid") ?? q.get("session_id");
  if (!callId) return undefined;
  const time = (v: string | null) => {
    if (!v) return undefined;
    if (/^\d+$/.test(v)) return Number(v);
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? undefined : ms;
  };
  const from = time(q.get("from"));
  const to = time(q.get("to"));
  return { callId, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

export const deepLink: Store<DeepLink | undefined> = createStore<DeepLink | undefined>(
  typeof location === "undefined" ? undefined : parseDeepLink(location.search),
);

/** Short-lived notices ("Layout saved", "Token copied"). */
export interface Toast {
  id: number;
  text: string;
  tone: "ok" | "error";
}
export const toasts: Store<Toast[]> = createStore<Toast[]>([]);
let toastSeq = 0;
export function notify(text: string, tone: Toast["tone"] = "ok"): void {
  const id = ++toastSeq;
  toasts.set((t) => [...t, { id, text, tone }]);
  setTimeout(() => toasts.set((t) => t.filter((x) => x.id !== id)), tone === "error" ? 8000 : 3500);
}

/** What the server offers (GET /me `features`): widgets skip switched-off routes instead of probing them. Unknown until /me answered. */
export const serverFeatures: Store<Me["features"] | undefined> = createStore<Me["features"] | undefined>(undefined);
