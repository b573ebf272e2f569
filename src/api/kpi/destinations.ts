import { t } from "elysia";
import { AppError } from "../../core/index.ts";
import type { Gathered, OverNodes } from "../search/fan-out.ts";

/**
 * The top failing destinations (docs/KPIS.md "Top failing destinations") from counts that add: per
 * destination the completed attempts, failures, answered and unanswered calls and the failures'
 * final codes counted per code. One lake's counts or every node's (docs/ARCHITECTURE.md "Reads
 * over several nodes") are ranked the same way, so a coordinator answers what one lake holding
 * every call answers: the counts of a destination add over the nodes, the ratio and the most
 * frequent code are taken once over the sums.
 */
export interface DestinationCounts {
  destination: string;
  attempts: number;
  failures: number;
  answered: number;
  no_response: number;
  /** [final code, failures ending with it]. */
  codes: Array<[number, number]>;
}

export interface FailingDestination {
  destination: string;
  attempts: number;
  failures: number;
  answered: number;
  failure_ratio: number;
  top_code: number | null;
  no_response: number;
}

/** Destinations one node may send a coordinator: beyond it the node answers 413 and is named failed. */
export const MAX_NODE_DESTINATIONS = 100_000;

/** `{"486": 3}` (DuckDB's histogram as JSON) → [[486, 3]]. */
export function codeCounts(v: unknown): Array<[number, number]> {
  if (typeof v !== "string" || v === "") return [];
  const o = JSON.parse(v) as Record<string, number> | null;
  return Object.entries(o ?? {}).map(([k, n]) => [Number(k), Number(n)]);
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The `limit` destinations with most failures over several lakes' counts (then by name); the top code the most frequent, the lowest of a tie. */
export function rankDestinations(
  lakes: ReadonlyArray<readonly DestinationCounts[]>,
  limit: number,
): FailingDestination[] {
  const sum = new Map<string, { d: DestinationCounts; codes: Map<number, number> }>();
  for (const list of lakes) {
    for (const d of list) {
      let s = sum.get(d.destination);
      if (!s)
        sum.set(
          d.destination,
          (s = { d: { ...d, attempts: 0, failures: 0, answered: 0, no_response: 0, codes: [] }, codes: new Map() }),
        );
      s.d.attempts += d.attempts;
      s.d.failures += d.failures;
      s.d.answered += d.answered;
      s.d.no_response += d.no_response;
      for (const [code, n] of d.codes) s.codes.set(code, (s.codes.get(code) ?? 0) + n);
    }
  }
  return [...sum.values()]
    .filter((s) => s.d.failures > 0)
    .sort((a, b) => b.d.failures - a.d.failures || byCodeUnit(a.d.destination, b.d.destination))
    .slice(0, limit)
    .map(({ d, codes }) => {
      let top: [number, number] | undefined;
      for (const [code, n] of codes) if (!top || n > top[1] || (n === top[1] && code < top[0])) top = [code, n];
      return {
        destination: d.destination,
        attempts: d.attempts,
        failures: d.failures,
        answered: d.answered,
        failure_ratio: d.attempts > 0 ? d.failures / d.attempts : 0,
        top_code: top ? top[0] : null,
        no_response: d.no_response,
      };
    });
}

/** `POST /api/v1/kpi/destinations` of a node (src/cluster/node-reads.ts). */
export const NodeDestinationsBody = t.Object({
  from_ms: t.Integer(),
  to_ms: t.Integer(),
  node: t.Optional(t.Union([t.Integer(), t.String({ minLength: 1, maxLength: 128 })])),
  now_ms: t.Integer({ description: "the coordinator's clock: every node classifies pending calls alike" }),
  buffer_only: t.Optional(
    t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" }),
  ),
});

/** A lake's counts of every destination with a completed call (what a node answers); 413 beyond MAX_NODE_DESTINATIONS. */
export async function everyDestination(
  counts: (limit: number) => Promise<DestinationCounts[]>,
): Promise<{ items: DestinationCounts[] }> {
  const items = await counts(MAX_NODE_DESTINATIONS + 1);
  if (items.length > MAX_NODE_DESTINATIONS)
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `more than ${MAX_NODE_DESTINATIONS} destinations in the window: narrow the time window or choose a node`,
    );
  return { items };
}

/** The top failing destinations over coordinator.nodes: every node's counts of every destination, added, then ranked once. */
export async function destinationsOverNodes(
  over: OverNodes,
  req: { fromMs: number; toMs: number; node?: number | string },
  limit: number,
  /** This process's lake; undefined on a coordinator without one. */
  local: ((now: number) => Promise<{ items: DestinationCounts[] }>) | undefined,
  graceMs: number,
): Promise<{ items: FailingDestination[]; gathered: Gathered<{ items: DestinationCounts[] }> }> {
  const now = Date.now();
  const g = await over.gather<{ items: DestinationCounts[] }>({
    read: "kpi-destinations",
    path: "/api/v1/kpi/destinations",
    // Responses are read graceMs after the window, as for the KPIs (docs/KPIS.md "Classifying a call").
    window: { fromMs: req.fromMs, toMs: req.toMs + graceMs },
    body: (bufferOnly) => ({
      from_ms: req.fromMs,
      to_ms: req.toMs,
      ...(req.node !== undefined ? { node: req.node } : {}),
      now_ms: now,
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
    ...(local ? { local: () => local(now) } : {}),
    rows: (v) => v.items.length,
  });
  return {
    items: rankDestinations(
      g.answers.map((a) => a.value.items),
      limit,
    ),
    gathered: g,
  };
}
