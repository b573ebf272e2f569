/**
 * The System, Logs and Integrations tags (docs/OPERATIONS.md "System, logs and integrations"):
 * what an administrator checks before opening a ticket, as HOMER's admin pages show it. Every
 * operation is for administrators and names no secret, password or path.
 */
import { Elysia, t } from "elysia";
import type { Config } from "../../config/index.ts";
import { engineThreadCount, hepThreadCount } from "../../config/index.ts";
import { GIT_REVISION, recentLogLines, VERSION, type LogLevel } from "../../core/index.ts";
import { authContext } from "../auth/guard.ts";
import type { HealthReport } from "../health.ts";
import { errors } from "../openapi/schemas.ts";

export interface SystemDeps {
  config: Config;
  /** When this process started (epoch ms). */
  startedAtMs: number;
  health?: () => HealthReport;
}

const Check = t.Object({ status: t.String(), output: t.Optional(t.String()) }, { additionalProperties: true });
const SystemInfo = t.Object({
  data: t.Object({
    version: t.String(),
    revision: t.String({ description: "git revision the binary was built from ('unknown' when not known)" }),
    started_at: t.String(),
    uptime_sec: t.Integer({ minimum: 0 }),
    roles: t.Object({
      coordinator: t.Boolean(),
      writer: t.Boolean({ description: "storage.lakehouse.enable: this process writes and reads a lake" }),
      hep_ingest: t.Boolean(),
      line_protocol: t.Boolean(),
      otlp: t.Boolean(),
      live_stream: t.Boolean(),
      mcp: t.Boolean(),
    }),
    ingest: t.Object({ hep_threads: t.Integer({ minimum: 0 }), hep_listen: t.Record(t.String(), t.String()) }),
    storage: t.Object({
      catalog_type: t.String(),
      data_path_kind: t.String({ description: "local, s3 or az (the path itself is not shown)" }),
      retention_days: t.Number(),
      engine_threads: t.Integer({ minimum: 1 }),
      flush_interval_sec: t.Number(),
    }),
    auth: t.Object({ type: t.String(), fallback_auth_type: t.String(), ldap: t.Boolean(), oauth2: t.Boolean() }),
    health: t.Object({
      status: t.String(),
      output: t.Optional(t.String()),
      checks: t.Record(t.String(), t.Array(Check)),
    }),
  }),
  meta: t.Object({}),
});

const LEVELS = ["debug", "info", "warn", "error"] as const;
const LogLine = t.Object({
  ts: t.String(),
  level: t.String(),
  msg: t.String(),
  fields: t.Record(t.String(), t.Unknown()),
});
const LogsResponse = t.Object({
  data: t.Array(LogLine),
  meta: t.Object({ count: t.Integer(), kept: t.Integer({ description: "lines the ring keeps (the newest)" }) }),
});

const Integration = t.Object({
  kind: t.String({ description: "ldap, oauth2, llm or node" }),
  name: t.String(),
  enabled: t.Boolean(),
  endpoint: t.String({ description: "host (and port) svc connects to; never credentials" }),
});
const IntegrationsResponse = t.Object({ data: t.Array(Integration), meta: t.Object({}) });

/** `scheme://host[:port]` of a URL, without user info, path or query; "" when it does not parse. */
function endpointOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "";
  }
}

const dataPathKind = (p: string) => (/^s3:\/\//i.test(p) ? "s3" : /^az:\/\//i.test(p) ? "az" : "local");

/** The outbound connections this configuration makes (docs/OPERATIONS.md "System, logs and integrations"). */
export function integrationsOf(
  config: Config,
): Array<{ kind: string; name: string; enabled: boolean; endpoint: string }> {
  const c = config.coordinator;
  const out: Array<{ kind: string; name: string; enabled: boolean; endpoint: string }> = [];
  if (c.ldap.enable || c.ldap.host) {
    const hosts = c.ldap.host.split(/\s+/).filter(Boolean);
    for (const h of hosts)
      out.push({
        kind: "ldap",
        name: "LDAP",
        enabled: c.ldap.enable,
        endpoint: `${c.ldap.use_ssl ? "ldaps" : "ldap"}://${h}:${c.ldap.port}`,
      });
  }
  if (c.oauth2_provider.enable || c.oauth2_provider.name) {
    out.push({
      kind: "oauth2",
      name: c.oauth2_provider.name,
      enabled: c.oauth2_provider.enable,
      endpoint: endpointOf(c.oauth2_provider.token_url),
    });
  }
  const llm = config.mcp.llm;
  if (llm.enable)
    out.push({ kind: "llm", name: `${llm.provider} ${llm.model}`, enabled: true, endpoint: endpointOf(llm.base_url) });
  for (const n of c.hep_stream.nodes)
    out.push({ kind: "node", name: endpointOf(n) || n, enabled: c.hep_stream.enable, endpoint: endpointOf(n) });
  return out;
}

export function systemRoutes(deps: SystemDeps) {
  const { config } = deps;
  return new Elysia({ name: "svc-system" })
    .use(authContext)
    .get(
      "/system/info",
      () => {
        const c = config.coordinator;
        const l = config.storage.lakehouse;
        const hep = config.ingest.hep;
        const health = deps.health?.() ?? { status: "pass", description: "svc appliance", checks: {} };
        const listen: Record<string, string> = {};
        if (l.enable && hep.enable) {
          if (hep.udp.enable) listen.udp = hep.udp.listen;
          if (hep.tcp.enable) listen.tcp = hep.tcp.listen;
          if (hep.tls.cert && hep.tls.key) listen.tls = hep.tls.listen;
        }
        return {
          data: {
            version: VERSION,
            revision: GIT_REVISION,
            started_at: new Date(deps.startedAtMs).toISOString(),
            uptime_sec: Math.max(0, Math.floor((Date.now() - deps.startedAtMs) / 1000)),
            roles: {
              coordinator: c.enable,
              writer: l.enable,
              hep_ingest: l.enable && hep.enable,
              line_protocol: l.enable && config.ingest.line_protocol.enable,
              otlp: l.enable && config.ingest.otlp.enable,
              live_stream: c.hep_stream.enable,
              mcp: config.mcp.enable,
            },
            ingest: {
              hep_threads: l.enable && hep.enable ? hepThreadCount(hep.threads, undefined, l.spool_format) : 0,
              hep_listen: listen,
            },
            storage: {
              catalog_type: l.catalog_type,
              data_path_kind: dataPathKind(l.data_path),
              retention_days: l.retention.days,
              engine_threads: engineThreadCount(config),
              flush_interval_sec: l.flush_interval_sec,
            },
            auth: {
              type: c.auth.type,
              fallback_auth_type: c.auth.fallback_auth_type,
              ldap: c.ldap.enable,
              oauth2: c.oauth2_provider.enable,
            },
            health: {
              status: health.status,
              ...(health.output ? { output: health.output } : {}),
              checks: health.checks,
            },
          },
          meta: {},
        };
      },
      {
        admin: true,
        response: { 200: SystemInfo, ...errors(401, 403) },
        detail: {
          tags: ["System"],
          summary: "Version, uptime, roles, configuration summary and module health (admin)",
        },
      },
    )
    .get(
      "/system/logs",
      ({ query }) => {
        const sinceMs = query.since ? Date.parse(query.since) : undefined;
        const lines = recentLogLines({
          limit: query.limit ?? 200,
          minLevel: (query.level ?? "info") as LogLevel,
          ...(sinceMs !== undefined && !Number.isNaN(sinceMs) ? { sinceMs } : {}),
        });
        return { data: lines, meta: { count: lines.length, kept: 2000 } };
      },
      {
        admin: true,
        query: t.Object({
          level: t.Optional(
            t.Union(
              LEVELS.map((l) => t.Literal(l)),
              { description: "lowest level shown (default info)" },
            ),
          ),
          limit: t.Optional(
            t.Integer({ minimum: 1, maximum: 2000, description: "newest lines at most (default 200)" }),
          ),
          since: t.Optional(t.String({ format: "date-time", description: "only lines after this time (ISO 8601)" })),
        }),
        response: { 200: LogsResponse, ...errors(400, 401, 403) },
        detail: { tags: ["Logs"], summary: "The appliance's newest log lines, oldest first (admin)" },
      },
    )
    .get(
      "/integrations",
      () => {
        return { data: integrationsOf(config), meta: {} };
      },
      {
        admin: true,
        response: { 200: IntegrationsResponse, ...errors(401, 403) },
        detail: {
          tags: ["Integrations"],
          summary: "Outbound connections: LDAP hosts, OAuth provider, language model, live-stream nodes (admin)",
        },
      },
    );
}
