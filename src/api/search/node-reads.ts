import { t } from "elysia";
import type { Lake } from "../../lake/index.ts";
import { callReportRows, type CallScope } from "./call-events.ts";
import { HistogramService } from "./histogram.ts";
import { NodeHistogramBody, nodeHistogramCells } from "./histogram-route.ts";
import type { SearchService } from "./service.ts";
import { localCallRows } from "./transaction.ts";

/**
 * What a node answers a coordinator for the reads besides the list search (docs/ARCHITECTURE.md
 * "Reads over several nodes"): the histogram's cells before the groups fold, a call view's rows
 * by Call-ID or correlation id, and a call's report rows. Routes with the node token:
 * src/cluster/node-reads.ts. Each answer is of this node's lake alone, or of its buffer alone
 * (`buffer_only`) when another node of the same lake answers for the files.
 */
export { NodeHistogramBody };

const TABLE_KEY = "^main\\.hep_proto_[0-9]{1,5}_[a-z_]{1,32}$";
const bufferOnly = t.Optional(
  t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" }),
);

export const NodeCallRowsBody = t.Object({
  tables: t.Array(t.String({ pattern: TABLE_KEY }), {
    minItems: 1,
    maxItems: 8,
    description: "the call view's tables (schema.table)",
  }),
  ids: t.Array(t.String({ minLength: 1 }), {
    minItems: 1,
    maxItems: 10_000,
    description: "Call-IDs or correlation ids",
  }),
  from_us: t.Integer(),
  to_us: t.Integer(),
  kind: t.Union([t.Literal("anchor"), t.Literal("correlate"), t.Literal("all")], {
    description: "anchor: the rows' times; correlate: session_id and cid; all: every column",
  }),
  buffer_only: bufferOnly,
});

const Pair = t.Object({ src_ip: t.String(), src_port: t.Integer(), dst_ip: t.String(), dst_port: t.Integer() });
export const NodeCallReportsBody = t.Object({
  key: t.String({ pattern: TABLE_KEY }),
  scope: t.Object({
    sessions: t.Array(t.String(), { maxItems: 10_000 }),
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }),
    media: t.Array(
      t.Object({
        call_id: t.String(),
        span: t.Union([t.Object({ from_us: t.Number(), to_us: t.Number() }), t.Null()]),
        pairs: t.Array(Pair, { maxItems: 64 }),
      }),
      { maxItems: 10_000 },
    ),
  }),
  select: t.Union([t.Literal("qos"), t.Literal("all")]),
  by_address: t.Boolean(),
  buffer_only: bufferOnly,
});

export interface NodeReadDeps {
  lake: Lake;
  search: SearchService;
  timeoutMs: number;
  maxResultBytes: number;
}

export function nodeReads(deps: NodeReadDeps) {
  const histograms = new HistogramService(deps.lake, deps.search, deps.timeoutMs);
  const opts = { timeoutMs: deps.timeoutMs, maxResultBytes: deps.maxResultBytes };
  return {
    histogram: (body: typeof NodeHistogramBody.static) => nodeHistogramCells(histograms, body),
    callRows: (b: typeof NodeCallRowsBody.static) =>
      localCallRows(deps.lake, opts, {
        tables: b.tables,
        ids: b.ids,
        fromUs: b.from_us,
        toUs: b.to_us,
        kind: b.kind,
        ...(b.buffer_only ? { bufferOnly: true } : {}),
      }),
    callReports: (b: typeof NodeCallReportsBody.static) =>
      callReportRows(
        deps.lake,
        b.key,
        b.scope satisfies CallScope,
        b.select,
        opts,
        b.by_address,
        b.buffer_only === true,
      ),
  };
}
