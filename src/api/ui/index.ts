import { existsSync, readFileSync, statSync } from "node:fs";
import { join, normalize, resolve, sep } from "node:path";
import { Elysia } from "elysia";

/**
 * The browser dashboard (STYLE.md: "ui/ Preact + htm, served from the binary; no CDN, works
 * offline"). Files come from the executable's embedded `ui-dist/` (scripts/build.ts passes
 * `--asset=./ui-dist`; `Bun.embeddedFiles` names them `ui-dist/...`) or, in a source run, from
 * `ui-dist/` on disk, read per request so `bun ui/build.ts` shows without a restart.
 *
 *   GET /                  index.html with the API base filled in (never cached: it names the assets)
 *   GET /assets/<file>     app.js, app.css, favicon.svg (cached: their URLs carry a content hash)
 *
 * Without a built UI, `/` answers 503 with a page saying how to build it.
 */
export interface UiOptions {
  /** `coordinator.http_server.api_prefix`: the page is told `{api_prefix}/api/v4` so the app calls the right base. */
  apiPrefix: string;
  /** Where the built UI lies in a source run (default: ui-dist/ at the repository root). */
  distDir?: string;
}

export interface UiFile {
  bytes: Uint8Array<ArrayBuffer>;
  type: string;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  json: "application/json",
};

const typeOf = (path: string) => TYPES[path.slice(path.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";

export const DEFAULT_UI_DIST = resolve(import.meta.dir, "..", "..", "..", "ui-dist");
const EMBED_PREFIX = "ui-dist/";

/** Where UI files are read from: the executable's embedded files when it has any, else a directory. */
export interface UiSource {
  kind: "embedded" | "disk";
  read(path: string): UiFile | undefined;
}

/** The executable's embedded `ui-dist/` files, loaded into memory once (a few hundred KiB); undefined when there are none. */
export async function embeddedUi(): Promise<UiSource | undefined> {
  const files = new Map<string, UiFile>();
  for (const blob of Bun.embeddedFiles) {
    const name = (blob as Blob & { name?: string }).name ?? "";
    if (!name.startsWith(EMBED_PREFIX)) continue;
    const path = name.slice(EMBED_PREFIX.length);
    files.set(path, { bytes: new Uint8Array(await blob.arrayBuffer()), type: typeOf(path) });
  }
  if (!files.has("index.html")) return undefined;
  return { kind: "embedded", read: (path) => files.get(path) };
}

export function diskUi(dir: string): UiSource {
  const root = resolve(dir);
  return {
    kind: "disk",
    read(path) {
      const full = normalize(join(root, path));
      if (!full.startsWith(root + sep)) return undefined;
      if (!existsSync(full) || !statSync(full).isFile()) return undefined;
      return { bytes: readFileSync(full), type: typeOf(path) };
    },
  };
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

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

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>svc: dashboard not built</title>
<body style="font:14px system-ui;margin:3em"><h1>The dashboard is not built</h1>
<p>This is a source run without <code>ui-dist/</code>. Build it with <code>make ui</code> (or <code>bun ui/build.ts</code>) and reload.
The API is available under <code>/api/v4</code>.</p></body>`;

/** Root plugin: mount with `createCoordinatorApp({ ..., root: [uiRoutes({ apiPrefix })] })`. */
export function uiRoutes(opts: UiOptions) {
  const apiBase = `${opts.apiPrefix.replace(/\/+$/, "")}/api/v4`;
  const sourceReady: Promise<UiSource> = embeddedUi().then((e) => e ?? diskUi(opts.distDir ?? DEFAULT_UI_DIST));

  const page = async () => {
    const f = (await sourceReady).read("index.html");
    if (!f) return new Response(NOT_BUILT, { status: 503, headers: { "content-type": TYPES.html!, "cache-control": "no-store" } });
    const html = new TextDecoder().decode(f.bytes).replace("%SVC_API_BASE%", escapeAttr(apiBase));
    return new Response(html, { headers: { ...PAGE_HEADERS, "content-type": TYPES.html!, "cache-control": "no-cache" } });
  };

  return new Elysia({ name: "svc-ui" })
    .get("/", page)
    .get("/index.html", page)
    .get("/favicon.ico", ({ redirect }) => redirect("/assets/favicon.svg", 301))
    .get("/assets/*", async ({ params, request }) => {
      const path = `assets/${params["*"]}`;
      const f = /^[A-Za-z0-9._/-]+$/.test(path) && !path.includes("..") ? (await sourceReady).read(path) : undefined;
      if (!f) return new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      // A versioned URL (?v=<hash>) never changes content; an unversioned one is revalidated.
      const versioned = new URL(request.url).searchParams.has("v");
      return new Response(f.bytes, {
        headers: {
          "content-type": f.type,
          "cache-control": versioned ? "public, max-age=31536000, immutable" : "no-cache",
          "x-content-type-options": "nosniff",
        },
      });
    });
}
