/**
 * Netris relay test helpers: players on the npm `ws` client (the client a Node user runs; loaded by
 * path, docs/STREAM.md "Tests") and a server with users to play as.
 */
import { waitFor } from "../harness.ts";
import { connectStream } from "./stream-helpers.ts";
import { ADMIN_PASSWORD, startServer, type Server } from "./auth-harness.ts";

export type Frame = { type: string } & Record<string, unknown>;

export interface Player extends Disposable {
  frames: Frame[];
  /** Resolves when the socket opened; rejects with "Unexpected server response: <status>" when refused. */
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  send(frame: unknown): void;
  sendRaw(text: string): void;
  /** A binary frame (the relay takes JSON text only). */
  sendBinary(bytes: Uint8Array): void;
  /** The first frame of `type` not yet taken by an earlier `next` (in arrival order). */
  next(type: string): Promise<Frame>;
  /** Frame types seen so far, in order. */
  types(): string[];
  close(): void;
}

export function connectPlayer(url: string): Player {
  // The stream's client (npm `ws`, JSON text frames) serves the relay as well.
  const c = connectStream(url);
  const frames = c.frames as unknown as Frame[];
  const taken = new Set<number>();
  return {
    frames,
    opened: c.opened,
    closed: c.closed,
    send: (f) => c.send(JSON.stringify(f)),
    sendRaw: (t) => c.send(t),
    sendBinary: (b) => c.send(b),
    async next(type) {
      const i = await waitFor(`a "${type}" frame (have ${frames.map((f) => f.type).join(", ") || "none"})`, () => {
        const k = frames.findIndex((f, j) => f.type === type && !taken.has(j));
        return k >= 0 ? k + 1 : undefined;
      });
      taken.add(i - 1);
      return frames[i - 1]!;
    },
    types: () => frames.map((f) => f.type),
    close: c.close,
    [Symbol.dispose]: c.close,
  };
}

export interface NetrisServer extends AsyncDisposable {
  server: Server;
  /** JWTs of the users alice, bob and carol (created by the admin). */
  tokens: Record<"alice" | "bob" | "carol" | "admin", string>;
  /** The relay URL with the user's token and `query`. */
  url(user: "alice" | "bob" | "carol" | "admin", query: string): string;
}

export async function startNetrisServer(dir: string, overrides: Record<string, unknown> = {}): Promise<NetrisServer> {
  const server = await startServer(dir, overrides);
  const login = async (username: string, password: string) => {
    const r = await server.fetch("POST", "/auth/sessions", { body: { username, password } });
    if (r.status !== 201) throw new Error(`login ${username}: ${r.status} ${r.text}`);
    return String((r.json as { token: string }).token);
  };
  const admin = await login("admin", ADMIN_PASSWORD);
  const tokens = { admin } as NetrisServer["tokens"];
  for (const name of ["alice", "bob", "carol"] as const) {
    const created = await server.fetch("POST", "/users", {
      token: admin,
      body: { username: name, password: `${name}-password-1` },
    });
    if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${created.text}`);
    tokens[name] = await login(name, `${name}-password-1`);
  }
  const ws = server.url.replace(/^http/, "ws");
  return {
    server,
    tokens,
    url: (user, query) =>
      `${ws}/api/v4/games/netris?${query}${query ? "&" : ""}access_token=${encodeURIComponent(tokens[user])}`,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

/** Two players in `room`, matched, both ready, started. */
export async function startedGame(s: NetrisServer, room: string): Promise<[Player, Player]> {
  const a = connectPlayer(s.url("alice", `room=${room}&display=Alice`));
  await a.next("waiting");
  const b = connectPlayer(s.url("bob", `room=${room}`));
  await Promise.all([a.next("matched"), b.next("matched")]);
  a.send({ type: "ready" });
  b.send({ type: "ready" });
  await Promise.all([a.next("start"), b.next("start")]);
  return [a, b];
}
