/**
 * The line-protocol receiver (docs/LINE-PROTOCOL.md "Receiver", "Errors"): InfluxDB-compatible
 * write endpoints on their own listen address. Plain Bun.serve: the body is read as bytes under the
 * cap, never parsed by a framework. No token is checked (a client's token is ignored); protect the
 * port with network controls or mutual TLS (`cert` + `key` + `cacert`).
 */
import type { Config } from "../../config/index.ts";
import {
  AppError,
  formatAddress,
  listenError,
  loadServerTls,
  parseListen,
  VERSION,
  type ColumnDef,
  type Counter,
  type Logger,
  type MetricsRegistry,
  type Module,
} from "../../core/index.ts";
import { readWriteBody } from "./body.ts";
import { LpIngest, type LpIngestOptions, type LpOutcome } from "./ingest.ts";
import { VALID_PREFIX } from "./names.ts";
import type { LpPrecision } from "./parse.ts";
import { adoptStoredTables, type LpTableSink } from "./tables.ts";

export type LineProtocolConfig = Config["ingest"]["line_protocol"];

export type LpEndpoint = "v1_write" | "v2_write" | "v3_write_lp" | "ping" | "health";
/** `outcome` label values: the spec's five, plus `server_error` for a 500 or 503 (table DDL or insert failed). */
export type LpRequestOutcome =
  | "ok"
  | "parse_error"
  | "body_too_large"
  | "bad_request"
  | "method_not_allowed"
  | "server_error";

const ROUTES: Record<string, LpEndpoint> = {
  "/write": "v1_write",
  "/api/v2/write": "v2_write",
  "/api/v3/write_lp": "v3_write_lp",
  "/ping": "ping",
  "/health": "health",
};

const PRECISIONS = new Set<string>(["ns", "us", "ms", "s"]);
const SERVICE_NAME = "svc";

export interface LineProtocolReceiver extends Module {
  readonly ingest: LpIngest;
  /** Port actually bound (differs from config when it asked for port 0). */
  port(): number;
  url(): string;
}

export interface LpReceiverMetrics {
  requests: Counter<"endpoint" | "outcome">;
  points: Counter<"database">;
  errors: Counter<"stage">;
}

/** The metrics of docs/LINE-PROTOCOL.md "Errors" (registered once per registry). */
export function lpReceiverMetrics(reg: MetricsRegistry): LpReceiverMetrics {
  const m: LpReceiverMetrics = {
    requests: reg.counter(
      "svc_lp_requests_received_total",
      "Line-protocol receiver requests, per endpoint and outcome.",
      ["endpoint", "outcome"],
    ),
    points: reg.counter("svc_lp_points_ingested_total", "Line-protocol points written, per database (schema).", [
      "database",
    ]),
    errors: reg.counter(
      "svc_lp_write_errors_total",
      "Line-protocol write failures, per stage (parse: bad lines; type_mismatch: dropped values; ddl, insert: points lost).",
      ["stage"],
    ),
  };
  for (const stage of ["parse", "ddl", "insert", "type_mismatch"]) m.errors.inc({ stage }, 0);
  return m;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });

const STATUS: Record<LpOutcome, number> = {
  ok: 204,
  parse_error: 400,
  bad_request: 400,
  server_error: 500,
  unavailable: 503,
};

/** Lines listed in a 400 body at most (the summary counts them all). */
const MAX_LISTED_LINES = 1000;

export function createLineProtocolReceiver(
  cfg: LineProtocolConfig,
  sink: LpTableSink,
  logger: Logger,
  metrics: MetricsRegistry,
  opts: {
    maxBufferedRows?: number;
    /** The appliance's own health (the coordinator's `/health`); without it `/health` always passes. */
    health?: () => { status: "pass" | "warn" | "fail"; output?: string };
    /** The edge's forward log (ingest.forward): each request whose rows were handed to the lake. */
    onWritten?: LpIngestOptions["onWritten"];
  } = {},
): LineProtocolReceiver {
  const log = logger.child({ module: "lineproto" });
  const addr = parseListen(cfg.listen, "ingest.line_protocol.listen");
  if (!VALID_PREFIX.test(cfg.table_prefix)) {
    throw new AppError(
      "CONFIG_INVALID",
      `ingest.line_protocol.table_prefix: "${cfg.table_prefix}" may hold only ASCII letters, digits and _`,
    );
  }
  // Both or neither, readable, the key the certificate's: refused now naming the key (src/core/tls-files.ts).
  loadServerTls(cfg, "ingest.line_protocol");
  const m = lpReceiverMetrics(metrics);
  const ingest = new LpIngest(
    sink,
    {
      defaultDb: cfg.default_db,
      tablePrefix: cfg.table_prefix,
      allowHepSipCall: cfg.allow_hep_sip_call,
      maxTables: cfg.max_tables,
      maxColumns: cfg.max_columns,
      ...opts,
    },
    m,
    log,
  );
  const count = (endpoint: LpEndpoint, outcome: LpRequestOutcome) => m.requests.inc({ endpoint, outcome });

  async function write(endpoint: LpEndpoint, req: Request, url: URL): Promise<Response> {
    const q = url.searchParams;
    const bad = (outcome: LpRequestOutcome, status: number, error: string) => {
      count(endpoint, outcome);
      return json(status, { error });
    };
    if (q.has("hep_table")) {
      return bad(
        "bad_request",
        400,
        "the hep_table parameter is no longer supported: name the HEP table as the measurement (e.g. hep_proto_1_call) and enable ingest.line_protocol.allow_hep_sip_call",
      );
    }
    const precision = q.get("precision") || cfg.default_precision;
    if (!PRECISIONS.has(precision))
      return bad("bad_request", 400, `invalid precision "${precision}": use ns, us, ms or s`);
    const body = await readWriteBody(req, cfg.max_body_bytes);
    if (!body.ok)
      return body.reason === "too_large"
        ? bad("body_too_large", 413, body.detail ?? body.reason)
        : bad("bad_request", 400, body.detail ?? body.reason);
    const database = endpoint === "v2_write" ? (q.get("bucket") ?? q.get("db")) : (q.get("db") ?? q.get("bucket"));
    const r = await ingest.write({
      body: body.value,
      database: database ?? undefined,
      precision: precision as LpPrecision,
      nowNs: nowNs(),
    });
    count(endpoint, r.outcome === "unavailable" ? "server_error" : r.outcome);
    if (r.outcome === "ok") return new Response(null, { status: 204 });
    const extra = r.lines.length > 0 ? { lines: r.lines.slice(0, MAX_LISTED_LINES) } : {};
    // InfluxDB clients honour Retry-After on 503; the lake drains its buffer within a flush.
    return json(
      STATUS[r.outcome],
      { error: r.message, written: r.written, ...extra },
      r.outcome === "unavailable" ? { "retry-after": "1" } : {},
    );
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const endpoint = ROUTES[url.pathname];
    if (!endpoint)
      return json(404, {
        error: `no such endpoint ${url.pathname}; writes go to /write, /api/v2/write or /api/v3/write_lp`,
      });
    const read = req.method === "GET" || req.method === "HEAD";
    if (endpoint === "ping" || endpoint === "health") {
      if (!read) {
        count(endpoint, "method_not_allowed");
        return json(405, { error: `${req.method} is not allowed on ${url.pathname}` }, { allow: "GET, HEAD" });
      }
      count(endpoint, "ok");
      if (endpoint === "ping")
        return new Response(null, {
          status: 204,
          headers: { "X-Tsdb-Version": VERSION, "X-Influxdb-Version": VERSION },
        });
      // InfluxDB's /health knows only pass (200) and fail (503); a degraded appliance (warn) still
      // stores every row, so it passes with the reason in the message (docs/ARCHITECTURE.md "Health").
      const h = opts.health?.();
      if (h?.status === "fail")
        return json(503, {
          name: SERVICE_NAME,
          status: "fail",
          message: h.output ?? "the appliance is failing",
          version: VERSION,
          checks: [],
        });
      const message = h?.status === "warn" ? `ready for writes, degraded: ${h.output ?? "warn"}` : "ready for writes";
      return json(200, { name: SERVICE_NAME, status: "pass", message, version: VERSION, checks: [] });
    }
    if (req.method !== "POST") {
      count(endpoint, "method_not_allowed");
      return json(405, { error: `${req.method} is not allowed on ${url.pathname}; use POST` }, { allow: "POST" });
    }
    return await write(endpoint, req, url);
  }

  let server: ReturnType<typeof Bun.serve> | undefined;
  const tls = cfg.cert && cfg.key;
  // Tables other writers of a shared catalog create while this one runs: adopted when the catalog's
  // snapshot changes, checked every ADOPT_CHECK_MS (docs/DUCKLAKE.md "PostgreSQL catalog").
  let watch: ReturnType<typeof setInterval> | undefined;
  let lastSnapshot: number | undefined;
  let checking: Promise<void> | undefined;
  // Columns of other writers join a table under its DDL lock, with this receiver's own growth.
  const grow = (key: string, columns: ColumnDef[]) => ingest.tables.adoptColumns(key, columns);
  const adoptNewTables = async (): Promise<void> => {
    if (!sink.snapshotId) return;
    try {
      const snap = await sink.snapshotId();
      if (snap === lastSnapshot) return;
      const adopted = await adoptStoredTables(sink, log, grow);
      lastSnapshot = snap;
      if (adopted > 0)
        log.info("line-protocol tables of other writers adopted from the catalog", { tables: adopted, snapshot: snap });
    } catch (e) {
      // The catalog may be down for a while (docs/DUCKLAKE.md "When the catalog is down"): next tick.
      log.debug("checking the catalog for new line-protocol tables failed", { error: e });
    }
  };
  return {
    name: "lineproto-receiver",
    ingest,
    async start() {
      lastSnapshot = await sink.snapshotId?.();
      const adopted = await adoptStoredTables(sink, log, grow);
      if (adopted > 0) log.info("line-protocol tables adopted from the catalog", { tables: adopted });
      watch = setInterval(() => {
        checking ??= adoptNewTables().finally(() => (checking = undefined));
      }, ADOPT_CHECK_MS);
      try {
        server = Bun.serve({
          hostname: addr.hostname,
          port: addr.port,
          // Our handler enforces max_body_bytes with a JSON 413 and a metric; Bun's own cap only backs it up.
          maxRequestBodySize: Math.max(cfg.max_body_bytes * 4, cfg.max_body_bytes + (1 << 20)),
          idleTimeout: Math.min(255, Math.max(1, cfg.read_timeout_sec, cfg.write_timeout_sec)),
          ...(tls
            ? {
                tls: {
                  cert: Bun.file(cfg.cert),
                  key: Bun.file(cfg.key),
                  ...(cfg.cacert ? { ca: Bun.file(cfg.cacert), requestCert: true, rejectUnauthorized: true } : {}),
                },
              }
            : {}),
          fetch: async (req) => {
            try {
              return await route(req);
            } catch (e) {
              // What failed (SQL, paths) stays in the log under the request id (docs/ARCHITECTURE.md
              // "Errors and request ids"); the client learns only that it was our fault.
              const requestId = crypto.randomUUID();
              log.error("line-protocol request failed", { request_id: requestId, error: e });
              return json(
                500,
                {
                  error: `internal error (request_id ${requestId}; details are in the appliance log)`,
                  request_id: requestId,
                },
                { "x-request-id": requestId },
              );
            }
          },
        });
      } catch (e) {
        throw listenError("line-protocol receiver", cfg.listen, "ingest.line_protocol.listen", e);
      }
      log.info("listening", {
        module: "lineproto-receiver",
        address: formatAddress(addr.hostname, server.port ?? addr.port),
        tls: Boolean(tls),
        client_certs: Boolean(tls && cfg.cacert),
      });
    },
    async stop() {
      if (watch) clearInterval(watch);
      watch = undefined;
      await checking;
      const s = server;
      server = undefined;
      // In-flight writes finish (their rows reach the lake before it flushes and closes).
      await s?.stop();
    },
    port: () => server?.port ?? addr.port,
    url: () => {
      const host =
        addr.hostname === "0.0.0.0"
          ? "127.0.0.1"
          : addr.hostname === "::"
            ? "[::1]"
            : addr.hostname.includes(":")
              ? `[${addr.hostname}]`
              : addr.hostname;
      return `${tls ? "https" : "http"}://${host}:${server?.port ?? addr.port}`;
    },
  };
}

/**
 * How often the receiver asks the catalog for its snapshot id (one indexed read) to adopt tables
 * another writer created: a new table of another host is searchable here within about a second.
 */
export const ADOPT_CHECK_MS = 1000;

/** Wall clock in epoch ns (millisecond resolution; the monotonic clock drifts from it over days). */
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
