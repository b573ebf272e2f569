import { Elysia, t } from "elysia";
import { errorHandler } from "../api/index.ts";
import { AppError, type Logger } from "../core/index.ts";
import type { HepPipeline } from "../ingest/index.ts";
import type { Lake } from "../lake/index.ts";

/**
 * Node-local HTTP (spec doc 2 "Node metadata endpoints"): no authentication — bind it to a
 * management network or loopback. Also HEP over HTTP POST (body = one or more HEP3 packets).
 */
export interface NodeAppDeps {
  logger: Logger;
  lake?: Lake;
  pipeline?: HepPipeline;
  catalogType: string;
  hepOverHttp: boolean;
}

const usToIso = (us: number | null) => (us === null ? null : new Date(Math.floor(us / 1000)).toISOString());

/**
 * `data_path` as the unauthenticated stats show it (spec doc 2 lists the field): an object-store URI
 * keeps its scheme and bucket, a local directory only its own name, e.g. `lake/`. The absolute path
 * told anyone on the node port where the appliance keeps its files (issue 14).
 */
export function publicDataPath(path: string): string {
  const uri = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)/i.exec(path);
  if (uri) return `${uri[1]}/`;
  const name = path.split(/[\\/]+/).filter(Boolean).pop();
  return name ? `${name}/` : "";
}

export function createNodeApp(deps: NodeAppDeps) {
  const app = new Elysia();
  app.use(errorHandler(deps.logger, app)).get("/health", () => ({ status: "pass" }));
  const lake = deps.lake;
  if (lake) {
    app
      .post(
        "/api/v1/metadata/check",
        async ({ body }) => {
          if (body.max_ts < body.min_ts) throw new AppError("VALIDATION", "max_ts must not be before min_ts", { details: { fields: ["max_ts"] } });
          const s = await lake.summary();
          const nodeMin = s.minUs === null ? null : s.minUs * 1000;
          const nodeMax = s.maxUs === null ? null : s.maxUs * 1000;
          const hasData = nodeMin !== null && nodeMax !== null && nodeMin <= body.max_ts && nodeMax >= body.min_ts;
          return {
            has_data: hasData,
            node_min_ts: nodeMin,
            node_max_ts: nodeMax,
            oldest_data: usToIso(s.minUs),
            newest_data: usToIso(s.maxUs),
            data_span_hours: s.minUs === null || s.maxUs === null ? 0 : Math.round(((s.maxUs - s.minUs) / 3.6e9) * 1000) / 1000,
          };
        },
        { body: t.Object({ min_ts: t.Number({ description: "nanoseconds since epoch" }), max_ts: t.Number({ description: "nanoseconds since epoch" }) }) },
      )
      .get("/api/v1/metadata/stats", async () => {
        const s = await lake.summary();
        return {
          row_count: s.rows,
          min_timestamp: s.minUs === null ? null : s.minUs * 1000,
          max_timestamp: s.maxUs === null ? null : s.maxUs * 1000,
          oldest_data: usToIso(s.minUs),
          newest_data: usToIso(s.maxUs),
          catalog_type: deps.catalogType,
          data_path: publicDataPath(lake.dataPathResolved()),
          snapshot_id: lake.snapshotId(),
        };
      });
  }
  const pipeline = deps.pipeline;
  if (pipeline && deps.hepOverHttp) {
    app.post("/api/v1/hep", async ({ request, set, server }) => {
      const body = new Uint8Array(await request.arrayBuffer());
      if (body.length === 0) throw new AppError("BAD_REQUEST", "empty body: send one or more HEP3 packets");
      const r = pipeline.handleStream(body, "http", server?.requestIP(request)?.address);
      if (r.rejected) throw new AppError("HEP_DECODE", `body is not a sequence of HEP3 packets (${r.packets} packets accepted before the error)`, { details: { accepted: r.packets } });
      set.status = 202;
      return { accepted: r.packets };
    });
  }
  return app;
}
