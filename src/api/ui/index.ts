import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { staticPlugin } from "@elysiajs/static";
import { Elysia } from "elysia";

/**
 * The browser dashboard (docs/STYLE.md "Layers": Preact + htm, served from the executable; no CDN,
 * works offline), from a built `ui-dist/` (ui/build.ts):
 *
 *   GET /                  index.html with the API base filled in (never cached: it names the assets)
 *   GET /assets/<file>     app.js, app.css, favicon.svg through @elysiajs/static (cached for a year
 *                          when the URL carries `?v=<content hash>`, revalidated otherwise)
 *
 * In the executable the files are the ones scripts/build.ts embedded with `--asset=./ui-dist`:
 * Bun serves them under `/$bunfs/root/ui-dist/`, where `stat`, `Bun.file` and `Bun.Glob` work like
 * on disk, so the same plugin reads them (docs/ARCHITECTURE.md "The dashboard"). In a source run
 * they come from `ui-dist/` in the tree, read per request so `bun ui/build.ts` shows on reload.
 * Without a built UI, `/` answers 503 with a page saying how to build it.
 */
export interface UiOptions {
  /** `coordinator.http_server.api_prefix`: the page is told `{api_prefix}/api/v4` so the app calls the right base. */
  apiPrefix: string;
  /** Extra image origins the page may load: the OAuth provider's button image (`coordinator.oauth2_provider.provider_image`). */
  imageOrigins?: readonly string[];
  /** Where the built UI lies (default: the executable's embedded copy, or ui-dist/ at the repository root in a source run). */
  distDir?: string;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  json: "application/json",
};

const typeOf = (path: string) =>
  TYPES[path.slice(path.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";

/** True inside the executable `bun build --compile` made: its modules live in Bun's `/$bunfs/`. */
export const isCompiledExecutable = (): boolean => Bun.main.startsWith("/$bunfs/");

/** ui-dist/ at the repository root (a source run). */
export const DEFAULT_UI_DIST = resolve(import.meta.dir, "..", "..", "..", "ui-dist");

/** Where the UI is read from when no `distDir` is given. */
export function defaultUiDir(): string {
  // `--asset=./ui-dist` keeps the path relative to the build's working directory, the repository root.
  return isCompiledExecutable() ? join(dirname(Bun.main), "ui-dist") : DEFAULT_UI_DIST;
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The page may only load its own scripts and styles and talk to its own origin; no framing
 * (clickjacking of the export buttons), no referrer outside the appliance.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** The CSP with `origins` added to img-src; a value that is not a plain http(s) origin is left out. */
function withImageOrigins(origins: readonly string[]): typeof PAGE_HEADERS {
  const ok = origins.flatMap((o) => {
    try {
      const u = new URL(o);
      return u.protocol === "https:" || u.protocol === "http:" ? [u.origin] : [];
    } catch {
      return [];
    }
  });
  if (ok.length === 0) return PAGE_HEADERS;
  const csp = PAGE_HEADERS["content-security-policy"].replace(
    "img-src 'self' data: blob:",
    `img-src 'self' data: blob: ${ok.join(" ")}`,
  );
  return { ...PAGE_HEADERS, "content-security-policy": csp };
}

const notBuiltPage = (
  compiled: boolean,
) => `<!doctype html><meta charset="utf-8"><title>svc: dashboard not built</title>
<body style="font:14px system-ui;margin:3em"><h1>The dashboard is not built</h1>
<p>${
  compiled
    ? "This executable was compiled without the dashboard (only <code>make build</code> / <code>scripts/build.ts</code> embed it). Rebuild it with <code>make build</code>."
    : "This is a source run without <code>ui-dist/</code>. Build it with <code>make ui</code> (or <code>bun ui/build.ts</code>) and restart."
}
The API is available under <code>/api/v4</code>.</p></body>`;

/** Asset paths we serve: plain names below assets/, nothing that could climb out. */
const SAFE_ASSET_PATH = /^\/assets\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Root plugin: mount with `createCoordinatorApp({ ..., root: [uiRoutes({ apiPrefix })] })`; serve after `await app.modules`. */
export function uiRoutes(opts: UiOptions) {
  const apiBase = `${opts.apiPrefix.replace(/\/+$/, "")}/api/v4`;
  const compiled = isCompiledExecutable();
  const dir = opts.distDir ?? defaultUiDir();
  // The plugin lists the directory when it is created, so it is mounted only for a built UI
  // (and the page says "not built" until a restart mounts it).
  const assets = join(dir, "assets");
  const assetsMounted = existsSync(assets);
  const pageHeaders = withImageOrigins(opts.imageOrigins ?? []);

  const page = async () => {
    const file = Bun.file(join(dir, "index.html"));
    if (!assetsMounted || !(await file.exists())) {
      return new Response(notBuiltPage(compiled), {
        status: 503,
        headers: { "content-type": TYPES.html!, "cache-control": "no-store" },
      });
    }
    const html = (await file.text()).replace("%SVC_API_BASE%", escapeAttr(apiBase));
    return new Response(html, {
      headers: { ...pageHeaders, "content-type": TYPES.html!, "cache-control": "no-cache" },
    });
  };

  const app = new Elysia({ name: "svc-ui" })
    .get("/", page)
    .get("/index.html", page)
    .get("/favicon.ico", ({ redirect }) => redirect("/assets/favicon.svg", 301))
    .onBeforeHandle(({ request }) => {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/assets/") && (!SAFE_ASSET_PATH.test(path) || path.includes(".."))) {
        return new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      }
    })
    .onAfterHandle(({ request, response }) => {
      const url = new URL(request.url);
      if (!url.pathname.startsWith("/assets/") || !(response instanceof Response) || response.status !== 200) return;
      response.headers.set("content-type", typeOf(url.pathname));
      // A versioned URL (?v=<hash>) never changes content; an unversioned one is revalidated.
      response.headers.set(
        "cache-control",
        url.searchParams.has("v") ? "public, max-age=31536000, immutable" : "no-cache",
      );
    });
  // etag: false serves each request from the file (the plugin keeps no response cache then), so a
  // rebuilt UI shows on reload.
  if (assetsMounted) {
    app.use(
      staticPlugin({
        assets,
        prefix: "/assets",
        etag: false,
        indexHTML: false,
        alwaysStatic: false,
        headers: { "x-content-type-options": "nosniff" },
      }),
    );
  }
  return app;
}
