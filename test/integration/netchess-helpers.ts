/**
 * NetChess test clients (docs/GAMES.md "NetChess"): the npm `ws` client loaded by path
 * (docs/STREAM.md "Tests"), a frame log per client and `next(type)` that waits for the next frame
 * of a type. The appliance runs without the lake: the relay needs only the coordinator.
 */
import { sha256Hex } from "../../src/auth/index.ts";
import type { ServerFrame } from "../../src/games/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { WebSocket } from "./stream-helpers.ts";

export const PASSWORD = "chess-admin-password";

export async function startChessAppliance(
  dir: string,
  overrides: Record<string, unknown> = {},
): Promise<TestAppliance> {
  const coordinator = {
    auth: { admin_password_hash: sha256Hex(PASSWORD) },
    ...((overrides.coordinator as Record<string, unknown>) ?? {}),
  };
  return await startTestAppliance(dir, {
    storage: { lakehouse: { enable: false } },
    ingest: { hep: { enable: false } },
    ...overrides,
    coordinator,
  });
}

export async function login(a: TestAppliance, username = "admin", password = PASSWORD): Promise<string> {
  const r = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`login failed: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { token: string }).token;
}

export interface Players {
  /** The administrator's JWT (plays White in `startGame`). */
  admin: string;
  /** A second user's JWT (Black): the relay never seats one user twice in a game. */
  bert: string;
}

const created = new WeakMap<TestAppliance, Promise<Players>>();

/** JWTs of two users: the administrator and `bert` (created through the users API once per appliance). */
export function players(a: TestAppliance): Promise<Players> {
  let p = created.get(a);
  if (!p) {
    p = (async () => {
      const admin = await login(a);
      const r = await fetch(`${a.app.coordinatorUrl}/api/v4/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ username: "bert", password: "bert-password-1" }),
      });
      if (r.status !== 201) throw new Error(`creating bert failed: ${r.status} ${await r.text()}`);
      return { admin, bert: await login(a, "bert", "bert-password-1") };
    })();
    created.set(a, p);
  }
  return p;
}

/** JWTs of `n` more users (`fan0`, `fan1`, …), created through the users API. */
export async function fans(a: TestAppliance, n: number): Promise<string[]> {
  const admin = await login(a);
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${a.app.coordinatorUrl}/api/v4/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ username: `fan${i}`, password: `fan${i}-password` }),
    });
    if (r.status !== 201) throw new Error(`creating fan${i} failed: ${r.status} ${await r.text()}`);
    tokens.push(await login(a, `fan${i}`, `fan${i}-password`));
  }
  return tokens;
}

export const netchessUrl = (a: TestAppliance, token: string, q: Record<string, string> = {}) =>
  `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/games/netchess?${new URLSearchParams({ ...q, access_token: token })}`;

type Of<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;

export class ChessClient implements Disposable {
  readonly frames: ServerFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: InstanceType<typeof WebSocket>;
  private readonly cursor = new Map<string, number>();
  private wake: () => void = () => {};

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on("error", () => {});
    this.ws.on("message", (data) => {
      this.frames.push(JSON.parse(String(data)) as ServerFrame);
      this.wake();
    });
    this.closed = new Promise((res) =>
      this.ws.on("close", (code, reason) => (res({ code, reason: reason.toString() }), this.wake())),
    );
  }

  static async open(url: string): Promise<ChessClient> {
    const c = new ChessClient(url);
    await new Promise<void>((res, rej) => {
      c.ws.once("open", () => res());
      c.ws.once("unexpected-response", (_req, resp) => rej(new Error(`handshake refused: ${resp.statusCode}`)));
      c.ws.once("error", rej);
    });
    return c;
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** `frame` as the UTF-8 bytes of its JSON in a binary frame. */
  sendBinary(frame: Record<string, unknown>): void {
    this.ws.send(Buffer.from(JSON.stringify(frame)));
  }

  move(uci: string): void {
    this.send({ type: "move", uci });
  }

  /** The next frame of `type` not yet returned by `next` (waits up to 10 s for it). */
  async next<T extends ServerFrame["type"]>(type: T, timeoutMs = 10_000): Promise<Of<T>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const from = this.cursor.get(type) ?? 0;
      const i = this.frames.findIndex((f, k) => k >= from && f.type === type);
      if (i >= 0) {
        this.cursor.set(type, i + 1);
        return this.frames[i] as Of<T>;
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no ${type} frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((f) => f.type))}`,
        );
      await new Promise<void>((res) => {
        const t = setTimeout(res, left);
        this.wake = () => (clearTimeout(t), res());
      });
    }
  }

  /** Frames of `type` received so far. */
  all<T extends ServerFrame["type"]>(type: T): Array<Of<T>> {
    return this.frames.filter((f) => f.type === type) as Array<Of<T>>;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(1000, "test done");
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Two players in a fresh room, both ready: returns them and the `start` frame once it has arrived. */
export async function startGame(
  a: TestAppliance,
  q: Record<string, string> = {},
): Promise<{ white: ChessClient; black: ChessClient; room: string; start: Of<"start"> }> {
  const room = q.room ?? `r${crypto.randomUUID().slice(0, 8)}`;
  const { admin, bert } = await players(a);
  const white = await ChessClient.open(
    netchessUrl(a, admin, { mode: "room", room, color: "white", display: "Wilma", ...q }),
  );
  await white.next("waiting");
  const black = await ChessClient.open(netchessUrl(a, bert, { mode: "room", room, display: "Bert" }));
  await Promise.all([white.next("matched"), black.next("matched")]);
  white.send({ type: "ready" });
  black.send({ type: "ready" });
  const [start] = await Promise.all([white.next("start"), black.next("start")]);
  return { white, black, room, start };
}

/** Plays `moves` alternately starting with `first`, waiting for each `opponent_move` echo on both sides. */
export async function play(
  players: { white: ChessClient; black: ChessClient },
  moves: string[],
  first: "white" | "black" = "white",
): Promise<Array<Of<"opponent_move">>> {
  const out: Array<Of<"opponent_move">> = [];
  let side = first;
  for (const uci of moves) {
    players[side].move(uci);
    const [m] = await Promise.all([
      players[side].next("opponent_move"),
      players[side === "white" ? "black" : "white"].next("opponent_move"),
    ]);
    if (m.uci !== uci) throw new Error(`expected ${uci}, relay said ${m.uci}`);
    out.push(m);
    side = side === "white" ? "black" : "white";
  }
  return out;
}
