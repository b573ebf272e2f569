/**
 * The dashboard plugin (src/api/ui) over a freshly built ui-dist: the page with the API base filled
 * in, versioned assets cached, unknown or escaping paths refused, and a helpful 503 without a build.
 * (The executable's embedded copy is checked by .ci/run against dist/svc.)
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { uiRoutes } from "../../src/api/index.ts";
import { buildUi } from "../../ui/build.ts";
import { tempDir } from "../harness.ts";

const get = (app: ReturnType<typeof uiRoutes>, path: string) => app.handle(new Request(`http://svc.test${path}`));

describe("ui plugin", () => {
  test("serves the built page and assets from disk", async () => {
    await using dir = tempDir("svc-ui-serve-");
    const out = join(dir.path, "ui-dist");
    const built = await buildUi({ outdir: out });
    const js = built.files.find((f) => f.path === "assets/app.js")!;
    expect(js.bytes).toBeGreaterThan(10_000);
    const app = uiRoutes({ apiPrefix: "/voip/", distDir: out });
    await app.modules;

    const page = await get(app, "/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('<meta name="svc-api-base" content="/voip/api/v4">');
    const src = /src="(\/assets\/app\.js\?v=[0-9a-f]{8})"/.exec(html)?.[1];
    expect(src).toBeDefined();
    expect(html).not.toContain("%APP_");

    const asset = await get(app, src!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await asset.arrayBuffer()).byteLength).toBe(js.bytes);
    expect(asset.headers.get("x-content-type-options")).toBe("nosniff");
    const css = await get(app, "/assets/app.css");
    expect(css.headers.get("cache-control")).toBe("no-cache");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    // A rebuilt file is served on the next request (no response cache in front of the files).
    writeFileSync(join(out, "assets", "app.css"), "/* rebuilt */");
    expect(await (await get(app, "/assets/app.css")).text()).toBe("/* rebuilt */");
    expect((await get(app, "/index.html")).status).toBe(200);

    for (const bad of [
      "/assets/nope.js",
      "/assets/..%2F..%2Fpackage.json",
      "/assets/%2e%2e/%2e%2e/package.json",
      "/assets/sub/..%2f..%2f..%2fpackage.json",
    ]) {
      expect((await get(app, bad)).status).toBe(404);
    }
  });

  test("without a build, / says how to build it", async () => {
    await using dir = tempDir("svc-ui-none-");
    const app = uiRoutes({ apiPrefix: "", distDir: join(dir.path, "missing") });
    await app.modules;
    const r = await get(app, "/");
    expect(r.status).toBe(503);
    const text = await r.text();
    expect(text).toContain("make ui");
    expect(text).toContain("source run");
    expect((await get(app, "/assets/app.js")).status).toBe(404);
  });
});
