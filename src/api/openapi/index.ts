import { toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { VERSION } from "../../core/index.ts";
import { sanitizeOpenApi } from "./sanitize.ts";

/**
 * The v4 API description, generated from the route schemas by @elysiajs/openapi's
 * `toOpenAPISchema` and corrected by `sanitizeOpenApi` (the generator's output is not valid
 * OpenAPI as is): the JSON at `{base}/openapi.json` and, at `{base}/openapi`, a small
 * self-contained HTML list of operations. The plugin's own route and UIs are not used: its UIs load
 * scripts from a CDN, which an offline appliance cannot reach, and its route serves the generator's
 * output uncorrected. Both routes are open.
 */
const TAGS = [
  "Auth",
  "Users",
  "Settings",
  "Dashboards",
  "Tokens",
  "Aliases",
  "Hepsub",
  "Agents",
  "Mappings",
  "Transactions",
  "Exports",
  "Imports",
  "Statistics",
  "Metrics",
  "Logs",
  "Integrations",
  "System",
  "Stream",
  "Games",
];

type Operation = { summary?: string; tags?: string[]; security?: unknown[] };

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function renderPage(paths: Record<string, Record<string, Operation> | undefined>, base: string): string {
  const rows: Array<{ tag: string; method: string; path: string; op: Operation }> = [];
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops ?? {}))
      rows.push({ tag: op.tags?.[0] ?? "Other", method: method.toUpperCase(), path, op });
  }
  rows.sort((a, b) => a.tag.localeCompare(b.tag) || a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  const body = rows
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.tag)}</td><td class="m">${r.method}</td><td><code>${escapeHtml(r.path)}</code></td><td>${escapeHtml(r.op.summary ?? "")}</td><td>${
          Array.isArray(r.op.security) && r.op.security.length === 0 ? "open" : "auth"
        }</td></tr>`,
    )
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>svc API v4</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}.m{font-weight:600}</style>
</head><body><h1>svc API v4</h1><p>Machine-readable description: <a href="${escapeHtml(base)}/openapi.json">openapi.json</a>.
Authenticate with <code>Authorization: Bearer &lt;JWT&gt;</code> from <code>POST ${escapeHtml(base)}/auth/sessions</code>.</p>
<table><thead><tr><th>Tag</th><th>Method</th><th>Path</th><th>Summary</th><th>Auth</th></tr></thead><tbody>
${body}
</tbody></table></body></html>`;
}

export function openapiRoutes(opts: { base: string; tokenHeader: string }) {
  const escaped = opts.base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // Only the v4 API: /metrics, /health and static files belong to other descriptions.
  const exclude = { paths: [new RegExp(`^(?!${escaped}/)`)] };
  const documentation = {
    info: {
      title: "svc coordinator API",
      version: "4.0.2-draft",
      description: `VoIP capture appliance, versioned API (server ${VERSION}).`,
    },
    tags: TAGS.map((name) => ({ name })),
    components: {
      securitySchemes: {
        bearer: { type: "http" as const, scheme: "bearer", bearerFormat: "JWT" },
        apiToken: { type: "apiKey" as const, in: "header" as const, name: opts.tokenHeader },
        sessionCookie: { type: "apiKey" as const, in: "cookie" as const, name: "svc_session" },
      },
    },
    security: [{ bearer: [] }, { apiToken: [] }, { sessionCookie: [] }] as Array<Record<string, string[]>>,
  };
  const self = new Elysia({ name: "svc-openapi" });
  let cached: { routes: number; doc: Record<string, unknown> } | undefined;
  const document = () => {
    // Built once the routes are all mounted (the first request), again only if routes were added.
    const routes = self.routes.length;
    if (cached?.routes === routes) return cached.doc;
    const generated = toOpenAPISchema(self, exclude);
    const doc = sanitizeOpenApi({
      openapi: "3.1.2",
      ...documentation,
      paths: generated.paths,
      components: { ...documentation.components, schemas: generated.components.schemas },
    });
    cached = { routes, doc };
    return doc;
  };
  return self
    .get("/openapi.json", () => document(), { detail: { hide: true } })
    .get(
      "/openapi",
      ({ set }) => {
        set.headers["content-type"] = "text/html; charset=utf-8";
        set.headers["content-security-policy"] = "default-src 'none'; style-src 'unsafe-inline'";
        return renderPage(document().paths as Record<string, Record<string, Operation>>, opts.base);
      },
      { detail: { hide: true } },
    );
}
