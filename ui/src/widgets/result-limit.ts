/**
 * The result count of a search channel and "Load more" (docs/ARCHITECTURE.md "Totals and paging of
 * the search lists"): "first 200 of 12 345 messages" when the limit cut the answer, the next page
 * fetched with the answer's `next_cursor` over the same request (same window and filter, so the
 * pages follow the exact newest-first order) and appended without duplicates.
 */
import { html } from "../lib/html.ts";
import { errorText, post } from "../lib/api.ts";
import { channel, type NodeReport, type ResultRow, type SearchPagination, type SearchState } from "../lib/state.ts";

/** 12345 → "12 345" (no-break spaces: a count never wraps between its digits). */
export function formatCount(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, "\u00a0");
}

const plural = (n: number) => `message${n === 1 ? "" : "s"}`;

/** The count line of a finished search: every match, or which part of them is shown. */
export function countText(shown: number, p: SearchPagination | undefined): string {
  if (!p?.has_more) return `${formatCount(shown)} ${plural(shown)}`;
  const of = p.total_exact ? formatCount(p.total) : `more than ${formatCount(p.total)}`;
  return `first ${formatCount(shown)} of ${of} ${plural(p.total)}`;
}

/**
 * The line of a partial answer of a coordinator over several nodes (`meta.partial`,
 * docs/ARCHITECTURE.md "Coordinator over several nodes"): which node failed or timed out and why,
 * so a missing call is never taken for an absent one. Undefined for a whole answer.
 */
export function partialText(state: { partial?: boolean; nodes?: readonly NodeReport[] }): string | undefined {
  if (!state.partial) return undefined;
  const missing = (state.nodes ?? []).filter((n) => n.status === "failed" || n.status === "timeout");
  const names = missing.map(
    (n) => `node ${n.name} ${n.status === "timeout" ? "timed out" : "failed"}${n.error ? ` (${n.error})` : ""}`,
  );
  return `Partial answer: ${names.length > 0 ? names.join("; ") : "some node did not answer"}. Its rows are missing.`;
}

/** The partial-answer warning under the results bar (role=alert: read out once when it appears). */
export function PartialNote({ state }: { state: Pick<SearchState, "partial" | "nodes"> }) {
  const text = partialText(state);
  return text ? html`<p class="results-partial" role="alert">${text}</p>` : null;
}

/** A row's identity across pages: its uuid (every HEP row has one), else the whole row. */
const rowKey = (r: ResultRow) => (typeof r.uuid === "string" ? r.uuid : JSON.stringify(r));

/** Fetches the page after the last one read and appends its new rows; a new search meanwhile wins. */
export async function loadMore(source: string): Promise<void> {
  const store = channel(source);
  const s = store.get();
  const cursor = s.pagination?.next_cursor;
  if (s.status !== "done" || !s.request || !cursor || s.more?.status === "loading") return;
  const request = s.request;
  store.set({ ...s, more: { status: "loading" } });
  const current = () => {
    const now = store.get();
    return now.seq === s.seq && now.request === request ? now : undefined;
  };
  try {
    const r = await post<{
      data: { items: ResultRow[] };
      meta: { pagination: SearchPagination; nodes?: NodeReport[]; partial?: boolean };
    }>("/transactions/search", {
      ...request,
      param: { ...request.param, cursor },
    });
    const now = current();
    if (!now) return;
    const seen = new Set(now.items.map(rowKey));
    const fresh = r.data.items.filter((row) => !seen.has(rowKey(row)));
    const { more: _done, ...rest } = now;
    // A later page's node failure makes the whole list partial.
    const partial = now.partial === true || r.meta.partial === true;
    store.set({
      ...rest,
      items: [...now.items, ...fresh],
      pagination: r.meta.pagination,
      ...(r.meta.nodes ? { nodes: r.meta.partial ? r.meta.nodes : (now.nodes ?? r.meta.nodes), partial } : {}),
    });
  } catch (e) {
    const now = current();
    if (now) store.set({ ...now, more: { status: "error", error: errorText(e) } });
  }
}

/**
 * The results bar's count (a live status) and, when the limit cut the answer, "Load more".
 * `onLoaded(rowsBefore)` lets the table show the first new row.
 */
export function ResultCount({
  source,
  state,
  onLoaded,
}: {
  source: string;
  state: SearchState;
  onLoaded?: (rowsBefore: number) => void;
}) {
  const p = state.pagination;
  const done = state.status === "done";
  const took = done && state.tookMs ? ` · ${Math.round(state.tookMs)} ms` : "";
  const text = state.status === "loading" ? "Searching…" : done ? `${countText(state.items.length, p)}${took}` : "";
  const cut = done && p?.has_more === true;
  const loadingMore = state.more?.status === "loading";
  const more = async () => {
    const before = state.items.length;
    await loadMore(source);
    if (channel(source).get().items.length > before) onLoaded?.(before);
  };
  return html`<span class="count" role="status">${text}</span>
    ${
      cut &&
      (p?.next_cursor
        ? html`<button type="button" class="btn btn-ghost" onClick=${more} disabled=${loadingMore} aria-busy=${loadingMore} title=${`Fetch the next ${formatCount(p.limit)} messages of this search`}>
          ${loadingMore ? "Loading more…" : "Load more"}
        </button>`
        : html`<span class="muted small">Narrow the time range or the filter to see the rest</span>`)
    }
    ${
      state.more?.status === "error" &&
      // Last in the bar, on a line of its own: the bar's other controls keep their places.
      html`<span class="alert alert-error small" role="alert" style=${{ order: 99, flexBasis: "100%" }}>Loading more failed: ${state.more.error}</span>`
    }`;
}
