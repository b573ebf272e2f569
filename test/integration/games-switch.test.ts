/**
 * `coordinator.widgets.control.games` and `/gamedata/` (docs/API.md "Errors", "Default
 * dashboards"; docs/GAMES.md): off = relays answer 503, no /gamedata/ route, no game dashboards; on
 * = files of `coordinator.http_server.gamedata_dir` served, nothing outside it.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { tempDir } from "../harness.ts";
import { connectPlayer, startNetrisServer } from "./netris-helpers.ts";

/** The status line of a request written by hand (fetch would normalise `..` away). */
async function rawStatus(url: string, path: string, token: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return await new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname, () =>
      sock.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      ),
    );
    let text = "";
    sock.on("data", (d) => (text += d.toString("latin1")));
    sock.on("end", () => resolve(text.split("\r\n")[0] ?? ""));
    sock.on("error", reject);
  });
}

const names = async (s: Awaited<ReturnType<typeof startNetrisServer>>, user: "alice" | "bob") => {
  const r = await s.server.fetch("GET", "/dashboards", { token: s.tokens[user] });
  return ((r.json as { data: { items: Array<{ name: string }> } }).data.items ?? []).map((d) => d.name);
};

describe("games switch", () => {
  test("games off: the relay answers 503, /gamedata/ is not registered, no game dashboards", async () => {
    await using dir = tempDir();
    const data = join(dir.path, "gamedata");
    mkdirSync(data);
    writeFileSync(join(data, "doom1.wad"), "IWAD");
    await using s = await startNetrisServer(dir.path, {
      coordinator: { widgets: { control: { games: false } }, http_server: { gamedata_dir: data } },
    });
    using p = connectPlayer(s.url("alice", "room=x"));
    await expect(p.opened).rejects.toThrow("Unexpected server response: 503");
    const r = await s.server.fetch("GET", "/games/netris?room=x", { token: s.tokens.alice });
    expect(r.status).toBe(503);
    expect(r.json).toEqual({
      error: "UNAVAILABLE",
      message: "games are disabled on this server (coordinator.widgets.control.games is false)",
    });
    const wad = await fetch(`${s.server.url}/gamedata/doom1.wad`, {
      headers: { authorization: `Bearer ${s.tokens.alice}` },
    });
    expect(wad.status).toBe(404);
    expect(await wad.text()).not.toBe("IWAD");
    expect(await names(s, "alice")).toEqual(["Home", "Smart Search", "Quality"]);
  });

  test("games on: the game dashboards are seeded and doom1.wad is served from gamedata_dir", async () => {
    await using dir = tempDir();
    const data = join(dir.path, "gamedata");
    mkdirSync(join(data, "sub"), { recursive: true });
    writeFileSync(join(data, "doom1.wad"), "IWAD-bytes");
    writeFileSync(join(data, "sub", "inner.wad"), "inner");
    writeFileSync(join(dir.path, "secret.txt"), "outside");
    symlinkSync(join(dir.path, "secret.txt"), join(data, "link.wad"));
    await using s = await startNetrisServer(dir.path, { coordinator: { http_server: { gamedata_dir: data } } });
    expect(await names(s, "bob")).toEqual(["Home", "Smart Search", "Quality", "Games", "NetGames"]);
    const wad = await fetch(`${s.server.url}/gamedata/doom1.wad`, {
      headers: { authorization: `Bearer ${s.tokens.bob}` },
    });
    expect(wad.status).toBe(200);
    expect(await wad.text()).toBe("IWAD-bytes");
    // Signed-in callers only (session cookie or bearer JWT).
    const anonymous = await fetch(`${s.server.url}/gamedata/doom1.wad`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain("IWAD");
    expect(
      (await fetch(`${s.server.url}/gamedata/doom1.wad`, { headers: { cookie: `svc_session=${s.tokens.bob}` } }))
        .status,
    ).toBe(200);
    expect(
      (await fetch(`${s.server.url}/gamedata/doom1.wad`, { headers: { authorization: "Bearer not-a-jwt" } })).status,
    ).toBe(401);
    for (const path of [
      "/gamedata/link.wad",
      "/gamedata/sub/inner.wad",
      "/gamedata/../secret.txt",
      "/gamedata/%2e%2e/secret.txt",
      "/gamedata/..%2fsecret.txt",
      "/gamedata/.hidden",
      "/gamedata/missing.wad",
    ]) {
      expect({ path, status: await rawStatus(s.server.url, path, s.tokens.bob) }).toEqual({
        path,
        status: "HTTP/1.1 404 Not Found",
      });
    }
    const missing = await fetch(`${s.server.url}/gamedata/freedoom.wad`, {
      headers: { authorization: `Bearer ${s.tokens.bob}` },
    });
    expect((await missing.json()) as unknown).toEqual({
      error: "NOT_FOUND",
      message: "freedoom.wad is not in the game data directory (coordinator.http_server.gamedata_dir)",
    });
  });

  test("an empty gamedata_dir disables the route; a missing directory answers 404 for every file", async () => {
    await using dir = tempDir();
    await using off = await startNetrisServer(dir.path, { coordinator: { http_server: { gamedata_dir: "" } } });
    expect(
      (
        await fetch(`${off.server.url}/gamedata/doom1.wad`, {
          headers: { authorization: `Bearer ${off.tokens.alice}` },
        })
      ).status,
    ).toBe(404);
    await using dir2 = tempDir();
    await using none = await startNetrisServer(dir2.path, {
      coordinator: { http_server: { gamedata_dir: join(dir2.path, "nowhere") } },
    });
    const r = await fetch(`${none.server.url}/gamedata/doom1.wad`, {
      headers: { authorization: `Bearer ${none.tokens.alice}` },
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { message: string }).message).toContain("doom1.wad is not in the game data directory");
  });
});
