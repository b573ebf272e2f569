import { AppError, fail, ok, type Result } from "../core/index.ts";
import type { CoordinatorClient } from "./coordinator-client.ts";
import { groupDigits } from "./search-output.ts";
import { partialNote, type FetchedRows } from "./search-fetch.ts";
import type { Row } from "./post-filter.ts";
import type { SearchOptions } from "./search-options.ts";

/**
 * `svc search --format pcap` writes whole calls (README.md "Terminal"): the search finds
 * the matching messages, their Call-IDs name the calls, and `POST /transactions/messages` brings
 * every message of each call and of its correlated legs, as the dashboard's call view does. A
 * search that matches more than the limits below stops with an error instead of a cut capture.
 */

/** Calls one PCAP holds at most (the export API's own bound on selected Call-IDs). */
export const PCAP_MAX_CALLS = 1000;
/** Calls asked for in one `POST /transactions/messages`: each answer stays well under the result cap. */
export const PCAP_CALLS_PER_REQUEST = 25;

export interface PcapCallPlan {
  /** Distinct Call-IDs of the matched rows, newest match first. */
  callIds: string[];
  /** Rows that carried no Call-ID (not written). */
  withoutCallId: number;
}

/**
 * The calls of a search's rows. Refused when the search stopped at its row limit without the user
 * asking for a limit (the capture would miss calls silently), or when it names more calls than
 * `maxCalls`.
 */
export function planPcapCalls(
  r: Pick<FetchedRows, "rows" | "limitReached" | "limit">,
  limitGiven: boolean,
  maxCalls = PCAP_MAX_CALLS,
): Result<PcapCallPlan, "TOO_MANY_MATCHES" | "TOO_MANY_CALLS" | "NO_MATCH"> {
  if (r.limitReached && !limitGiven) {
    return fail(
      "TOO_MANY_MATCHES",
      `the search matches more than ${groupDigits(r.limit)} messages: narrow it (--from/--to, filters) or give --limit N to write the calls of the newest N matches`,
    );
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  let withoutCallId = 0;
  for (const row of r.rows) {
    const id = typeof row.session_id === "string" ? row.session_id : "";
    if (id === "") {
      withoutCallId++;
      continue;
    }
    if (seen.has(id)) continue;
    seen.add(id);
    ids.push(id);
  }
  if (ids.length === 0)
    return fail(
      "NO_MATCH",
      r.rows.length === 0 ? "the search matched no messages" : `none of the ${r.rows.length} rows has a Call-ID`,
    );
  if (ids.length > maxCalls) {
    return fail(
      "TOO_MANY_CALLS",
      `the search matches ${groupDigits(ids.length)} calls; a PCAP holds at most ${groupDigits(maxCalls)}: narrow the search or lower --limit`,
    );
  }
  return ok({ callIds: ids, withoutCallId });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Every message of `callIds` and their correlated legs, each once (keyed by uuid; two batches may
 * share a leg), asked in batches so each answer stays small. A batch a coordinator answered
 * without some node (`meta.partial`) adds its warning to `notes`, once: the capture misses that
 * node's messages, as the search's own warning says of its rows.
 */
export async function fetchCallMessages(
  client: CoordinatorClient,
  o: SearchOptions,
  callIds: readonly string[],
  notes?: string[],
): Promise<Row[]> {
  const byUuid = new Map<string, Row>();
  const loose: Row[] = [];
  for (let i = 0; i < callIds.length; i += PCAP_CALLS_PER_REQUEST) {
    const batch = callIds.slice(i, i + PCAP_CALLS_PER_REQUEST);
    const j = await client.post("/transactions/messages", {
      session_id: batch,
      proto_type: o.query.proto,
      event_type: o.query.eventType,
      timestamp: { from: o.query.fromMs, to: o.query.toMs },
    });
    const items = isObj(j) && isObj(j.data) && Array.isArray(j.data.items) ? j.data.items : undefined;
    if (!items) throw new AppError("BAD_GATEWAY", "/transactions/messages: unexpected answer (no data.items)");
    const partial = isObj(j) && isObj(j.meta) ? partialNote(j.meta) : undefined;
    if (partial && notes && !notes.includes(partial)) notes.push(partial);
    for (const m of items) {
      if (!isObj(m)) continue;
      if (typeof m.uuid === "string" && m.uuid !== "") byUuid.set(m.uuid, m);
      else loose.push(m);
    }
  }
  return [...byUuid.values(), ...loose];
}
