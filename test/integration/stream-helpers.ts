/**
 * Live-stream test helpers (docs/STREAM.md): WebSocket subscribers on the npm `ws` client (the
 * client the stream is judged with), a raw-TCP handshake that shows the HTTP answer of a refused
 * upgrade or stays open without reading (a slow subscriber), HEP over UDP/TCP, and a sentinel
 * subscriber that proves the broker has started receiving the ingest thread's events.
 */
import { createRequire } from "node:module";
import net from "node:net";
import { dirname, join } from "node:path";
import type NpmWebSocket from "ws";
import { encodeHep3 } from "../../src/hep/index.ts";
import type { StreamFrame } from "../../src/stream/index.ts";
import { waitFor } from "../harness.ts";

/**
 * The npm `ws` package (devDependency, 8.23.0), loaded from its own directory: Bun answers the bare
 * specifier "ws" (import and require alike) with a re-implementation of its own built into the
 * runtime (`import.meta.resolve("ws")` is "ws", not a path), so `import WebSocket from "ws"` would
 * test Bun's copy, not the client users run under Node (docs/STREAM.md "Tests").
 */
const requireHere = createRequire(import.meta.url);
const wsDir = dirname(requireHere.resolve("ws/package.json"));
export const WebSocket = requireHere(join(wsDir, "index.js")) as typeof NpmWebSocket;
/** The version of the client in use (a test checks it is the pinned npm package). */
export const WS_VERSION = (requireHere(join(wsDir, "package.json")) as { version: string }).version;

export interface StreamClient extends Disposable {
  frames: StreamFrame[];
  raw: string[];
  /** Rejects when the handshake is refused: `ws` says "Unexpected server response: <status>". */
  opened: Promise<void>;
  /** The close frame's code and reason (1006 and "" when the connection ended without one). */
  closed: Promise<{ code: number; reason: string }>;
  /** Sends a text frame, or a binary one for bytes (the game relays read them; the stream ignores them). */
  send(data: string | Uint8Array): void;
  close(): void;
}

/** `localAddress`: the source address (any of 127.0.0.0/8 is local on Linux), for per-address shares. */
export function connectStream(
  url: string,
  headers: Record<string, string> = {},
  opts: { localAddress?: string } = {},
): StreamClient {
  const ws = new WebSocket(url, { headers, ...opts });
  const frames: StreamFrame[] = [];
  const raw: string[] = [];
  let opened!: () => void;
  let failed!: (e: Error) => void;
  const openP = new Promise<void>((res, rej) => ((opened = res), (failed = rej)));
  // A refused handshake rejects `opened`; tests that expect it await `closed` instead.
  openP.catch(() => {});
  let error: Error | undefined;
  ws.on("error", (e) => (error ??= e));
  const closed = new Promise<{ code: number; reason: string }>((res) => {
    ws.on("close", (code, reason) => {
      failed(error ?? new Error(`closed before open: ${code} ${reason.toString()}`));
      res({ code, reason: reason.toString() });
    });
  });
  ws.on("open", () => opened());
  ws.on("message", (data, isBinary) => {
    // The stream sends text frames only: a binary one fails the JSON parse and so the test.
    const text = Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data as ArrayBuffer)]).toString(
      isBinary ? "hex" : "utf8",
    );
    raw.push(text);
    frames.push(JSON.parse(text) as StreamFrame);
  });
  const close = () => {
    if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    else ws.close(1000, "test done");
  };
  return { frames, raw, opened: openP, closed, send: (data) => ws.send(data), close, [Symbol.dispose]: close };
}

export interface RawHandshake {
  status: number;
  head: string;
  /** The body of a non-101 answer. */
  body: string;
  socket: net.Socket;
}

/**
 * A WebSocket handshake written by hand over TCP: the status line and body of the answer. After
 * a 101 the socket is paused and never read again, so the server's sends back up (a subscriber
 * that reads nothing).
 */
export function rawHandshake(url: string, headers: Record<string, string> = {}): Promise<RawHandshake> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname);
    let buf = Buffer.alloc(0);
    socket.on("error", reject);
    socket.on("connect", () => {
      const lines = [
        `GET ${u.pathname}${u.search} HTTP/1.1`,
        `Host: ${u.host}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        `Sec-WebSocket-Key: ${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64")}`,
        "Sec-WebSocket-Version: 13",
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = buf.subarray(0, end).toString("latin1");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      if (status === 101) {
        socket.off("data", onData);
        socket.pause();
        resolve({ status, head, body: "", socket });
        return;
      }
      const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? -1);
      const body = buf.subarray(end + 4);
      if (len >= 0 && body.length < len) return;
      socket.off("data", onData);
      socket.destroy();
      resolve({ status, head, body: body.toString("utf8"), socket });
    };
    socket.on("data", onData);
  });
}

export interface HepEvent {
  proto?: number;
  srcIp?: string;
  dstIp?: string;
  srcPort?: number;
  dstPort?: number;
  captureId?: number;
  tsUs?: number;
  payload: string | Uint8Array;
}

/**
 * A capture time in µs that grows with every packet, as an agent's does: with several ingest
 * threads the stream orders events by capture time, and only equal times keep no send order.
 */
let lastTsUs = 0;
const nextTsUs = () => (lastTsUs = Math.max(Date.now() * 1000, lastTsUs + 1));

export const hep = (e: HepEvent) =>
  encodeHep3({
    srcIp: e.srcIp ?? "10.0.0.1",
    dstIp: e.dstIp ?? "10.0.0.2",
    srcPort: e.srcPort ?? 5060,
    dstPort: e.dstPort ?? 5060,
    ipProtocol: 17,
    timestampUs: e.tsUs ?? nextTsUs(),
    protoType: e.proto ?? 1,
    captureId: e.captureId ?? 2001,
    payload: e.payload,
  });

export async function udpSender(port: number) {
  const udp = await Bun.udpSocket({});
  return {
    send: (packets: Uint8Array[]) => {
      for (const p of packets) udp.send(p, port, "127.0.0.1");
    },
    close: () => udp.close(),
  };
}

/** Prometheus text → the value of one series (0 when absent). */
export function series(text: string, name: string, labels = ""): number {
  const line = text.split("\n").find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

/**
 * An unfiltered subscriber that has seen a probe event (HEP type 100, a log line): from then on
 * the broker receives the ingest thread's events. Keep it open for the test.
 */
export async function captureOn(
  streamUrl: string,
  send: (p: Uint8Array[]) => void,
  headers: Record<string, string> = {},
): Promise<StreamClient> {
  const sentinel = connectStream(streamUrl, headers);
  await sentinel.opened;
  await waitFor(
    "the ingest thread to capture for the stream",
    () => {
      if (sentinel.frames.length > 0) return true;
      send([hep({ proto: 100, srcPort: 1, payload: "probe" })]);
      return false;
    },
    10_000,
    50,
  );
  // A last probe: once it is in, every earlier probe is too and none arrives among a test's events.
  send([hep({ proto: 100, srcPort: 2, payload: "last probe" })]);
  await waitFor("the last probe event", () => sentinel.frames.some((f) => f.src_port === 2));
  return sentinel;
}

/** A password login on the coordinator: the JWT and the `svc_session` cookie. */
export async function login(
  coordinatorUrl: string,
  username: string,
  password: string,
): Promise<{ token: string; cookie: string }> {
  const r = await fetch(`${coordinatorUrl}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (r.status !== 201) throw new Error(`login of ${username}: ${r.status} ${await r.text()}`);
  const body = (await r.json()) as { token: string };
  return { token: body.token, cookie: (r.headers.get("set-cookie") ?? "").split(";")[0]! };
}

/** A user without administrator rights, created by an administrator's token. */
export async function createViewer(
  coordinatorUrl: string,
  adminToken: string,
  username: string,
  password: string,
): Promise<void> {
  const r = await fetch(`${coordinatorUrl}/api/v4/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (r.status !== 201) throw new Error(`creating ${username}: ${r.status} ${await r.text()}`);
}

/**
 * Whether the server closed a subscriber (its code and reason) or kept it (undefined): kept once
 * `kept()` holds (e.g. the subscribers gauge counts it), whichever is seen first.
 */
export async function settled(
  c: StreamClient,
  kept: () => boolean,
): Promise<{ code: number; reason: string } | undefined> {
  let end: { code: number; reason: string } | undefined;
  void c.closed.then((e) => (end = e));
  await c.opened.catch(() => {});
  await waitFor("the subscriber kept or closed", () => end !== undefined || kept());
  return end;
}
