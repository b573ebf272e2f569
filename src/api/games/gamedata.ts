import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve, sep } from "node:path";
import { staticPlugin } from "@elysiajs/static";
import { Elysia } from "elysia";
import type { AuthService } from "../../auth/index.ts";
import type { Logger } from "../../core/index.ts";
import { SESSION_COOKIE, cookieValue } from "../auth/cookies.ts";

/** A file name directly in the directory: no sub-folders, no dot files, no escapes or encodings. */
const SAFE = /^\/gamedata\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const notFound = (what: string) =>
  new Response(
    JSON.stringify({
      error: "NOT_FOUND",
      message: `${what} is not in the game data directory (coordinator.http_server.gamedata_dir)`,
    }),
    {
      status: 404,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    },
  );

/** The real path of `name` when it is a regular file inside `root` (a symbolic link may not lead out). */
function insideFile(root: string, name: string): boolean {
  try {
    const real = realpathSync(resolve(root, name));
    return real.startsWith(root + sep) && statSync(real).isFile();
  } catch {
    return false;
  }
}

/**
 * `GET /gamedata/<file>` (docs/GAMES.md "Game data"): the files of
 * `coordinator.http_server.gamedata_dir` (the Doom widget loads `doom1.wad`), served by
 * `@elysiajs/static` like the dashboard's assets. Not registered when games are off or the key is
 * empty (callers decide). Only plain file names directly in the directory are served; a path with
 * a sub-folder, `..`, an encoded character or a link leading out of the directory is a 404. The
 * files need a signed-in caller (session cookie or bearer JWT): an IWAD may be licensed to the
 * operator, not to whoever reaches the port.
 */
export function gamedataRoutes(dir: string, logger: Logger, auth: Pick<AuthService, "verifySession">) {
  const root = resolve(dir);
  const app = new Elysia({ name: "svc-gamedata" });
  app.onBeforeHandle(async ({ request }) => {
    if (!new URL(request.url).pathname.startsWith("/gamedata/")) return;
    const bearer = request.headers.get("authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
    const token = bearer ?? cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
    if (!token || !(await auth.verifySession(token)).ok) {
      return new Response(JSON.stringify({ error: "UNAUTHORIZED", message: "sign in to load game data" }), {
        status: 401,
        headers: { "content-type": "application/json; charset=utf-8", "www-authenticate": 'Bearer realm="svc"' },
      });
    }
  });
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    // The static plugin lists the directory when it is created; without one every file is missing.
    logger.warn("game data directory missing: /gamedata/ serves nothing until it exists and svc restarts", {
      key: "coordinator.http_server.gamedata_dir",
    });
    return app.get("/gamedata/*", ({ params }) => notFound(params["*"] || "that file"));
  }
  const realRoot = realpathSync(root);
  app.onBeforeHandle(({ request }) => {
    const path = new URL(request.url).pathname;
    if (!path.startsWith("/gamedata/")) return;
    const name = path.slice("/gamedata/".length);
    if (!SAFE.test(path) || !insideFile(realRoot, name)) return notFound(SAFE.test(path) ? name : "that file");
  });
  // etag: false serves each request from the file, so a replaced file shows without a restart.
  app.use(
    staticPlugin({
      assets: realRoot,
      prefix: "/gamedata",
      etag: false,
      indexHTML: false,
      alwaysStatic: false,
      headers: { "x-content-type-options": "nosniff", "cache-control": "no-cache" },
    }),
  );
  return app;
}
