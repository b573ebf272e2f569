/**
 * The engine's sockets (docs/LOADGEN.md "Transports"): UDP (`u1`, `un`; `ui` in transport-ui.ts), TCP (`t1`, `tn`) and TLS
 * (`l1`, `ln`), one socket for every call (`…1`) or one per call (`…n`), as sipp's `-t`. Each bound
 * socket or stream connection is a Leg; received messages go to `onMessage` with the peer address.
 */
import { lookup } from "node:dns/promises";
import { networkInterfaces } from "node:os";
import type { Leg, Peer } from "./call-host.ts";
import { LoadgenUsageError } from "./options.ts";
import { StreamFramer } from "./stream-framer.ts";

/** The address headers advertise for a wildcard bind: the first external IPv4, else loopback. */
/**
 * How long a client keeps a TCP/TLS connection after the call(s) on it ended: sipp's UAS keeps a call
 * 4 s after its last 200 and counts a connection closed before then as a failed call.
 */
export const STREAM_CLOSE_DELAY_MS = 4000;

export function advertisedIp(bind: string): string {
  if (bind !== "0.0.0.0" && bind !== "::" && bind !== "") return bind;
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

export async function resolveHost(host: string): Promise<string> {
  try {
    return (await lookup(host)).address;
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot resolve the remote host "${host}" (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

export type TransportKind = "udp" | "tcp" | "tls";

export interface TransportMode {
  kind: TransportKind;
  perCall: boolean;
  /** `ui`: one UDP socket per IP address of the injection file (transport-ui.ts). */
  perIp?: boolean;
}

const MODES: Record<string, TransportMode> = {
  u1: { kind: "udp", perCall: false },
  un: { kind: "udp", perCall: true },
  ui: { kind: "udp", perCall: false, perIp: true },
  t1: { kind: "tcp", perCall: false },
  tn: { kind: "tcp", perCall: true },
  l1: { kind: "tls", perCall: false },
  ln: { kind: "tls", perCall: true },
};

export function transportMode(t: string): TransportMode {
  const m = MODES[t];
  if (!m) throw new LoadgenUsageError(`transport "${t}" is not one of u1, un, ui, t1, tn, l1, ln`);
  return m;
}

export interface TransportHooks {
  onMessage(text: string, from: Peer, leg: Leg): void;
  /** Every message handed to a socket, for statistics and the mirror. */
  onSent(leg: Leg, text: string, host: string, port: number): void;
  /** A stream connection broke or carried something that is not SIP, or a UDP socket reported an error (ICMP). */
  onStreamError(reason: string): void;
  /** A stream connection ended (either side closed it). */
  onStreamClosed(leg: Leg): void;
}

const decoder = new TextDecoder();
const TOKEN = { udp: "UDP", tcp: "TCP", tls: "TLS" } as const;

export async function udpLeg(ip: string, port: number, advertised: string, hooks: TransportHooks): Promise<Leg> {
  let leg: Leg;
  let sock: import("bun").udp.Socket<"uint8array">;
  try {
    sock = await Bun.udpSocket({
      hostname: ip,
      port,
      binaryType: "uint8array",
      socket: {
        data: (_s, data, fromPort, fromAddr) =>
          hooks.onMessage(decoder.decode(data), { host: fromAddr, port: fromPort }, leg),
        // ICMP port unreachable from a peer that is down comes back as ECONNREFUSED: counted, not thrown.
        // Bun 1.4 passes the error first although its types name the socket first; take whichever is the Error.
        error: (...args: unknown[]) =>
          hooks.onStreamError(
            (args.find((a) => a instanceof Error) as Error | undefined)?.message ?? "udp socket error",
          ),
      },
    });
  } catch (e) {
    throw new LoadgenUsageError(`cannot listen on udp ${ip}:${port}: ${(e as Error).message}`);
  }
  // A call may still answer on a socket closed under it (a listener toggled off): that send is dropped.
  let closed = false;
  leg = {
    ip: advertised,
    port: sock.port,
    transport: "UDP",
    reliable: false,
    send(text, host, toPort) {
      if (closed) return;
      sock.send(text, toPort, host);
      hooks.onSent(leg, text, host, toPort);
    },
    close: () => {
      closed = true;
      sock.close();
    },
  };
  return leg;
}

interface ConnState {
  framer: StreamFramer;
  /** Per connection: a UTF-8 character split across reads must not leak into another connection. */
  decoder: TextDecoder;
  leg: Leg;
  /** Bytes the socket has not taken yet (written on `drain`); bytes, so a split character stays whole. */
  pending: Buffer | undefined;
}

type StreamSocket = import("bun").Socket<ConnState>;

/** A Leg over one stream connection; partial writes wait for `drain` (Bun returns the bytes written). */
function streamLeg(
  s: StreamSocket,
  advertised: string,
  kind: "tcp" | "tls",
  hooks: TransportHooks,
): Leg & { closed: boolean } {
  const leg: Leg & { closed: boolean } = {
    closed: false,
    ip: advertised,
    port: s.localPort,
    transport: TOKEN[kind],
    reliable: true,
    send(text) {
      const st = s.data;
      const bytes = Buffer.from(text);
      if (st.pending) st.pending = Buffer.concat([st.pending, bytes]);
      else {
        const n = s.write(bytes);
        if (n < bytes.length) st.pending = bytes.subarray(Math.max(n, 0));
      }
      hooks.onSent(leg, text, s.remoteAddress, (s as unknown as { remotePort: number }).remotePort ?? 0);
    },
    close: () => s.end(),
  };
  return leg;
}

/** Per-connection state; a TLS client may see `open` only after the handshake, so connect calls it too. */
function initConn(s: StreamSocket, advertised: string, kind: "tcp" | "tls", hooks: TransportHooks): ConnState {
  if (!s.data?.leg) {
    s.data = {
      framer: new StreamFramer(),
      decoder: new TextDecoder(),
      leg: undefined as unknown as Leg,
      pending: undefined,
    };
    s.data.leg = streamLeg(s, advertised, kind, hooks);
  }
  return s.data;
}

function streamHandlers(advertised: string, kind: "tcp" | "tls", hooks: TransportHooks) {
  return {
    open(s: StreamSocket) {
      initConn(s, advertised, kind, hooks);
    },
    data(s: StreamSocket, data: Uint8Array) {
      initConn(s, advertised, kind, hooks);
      const msgs = s.data.framer.push(s.data.decoder.decode(data, { stream: true }));
      if (msgs === null) {
        hooks.onStreamError("not SIP");
        s.end();
        return;
      }
      const from = { host: s.remoteAddress, port: (s as unknown as { remotePort: number }).remotePort ?? 0 };
      for (const m of msgs) hooks.onMessage(m, from, s.data.leg);
    },
    drain(s: StreamSocket) {
      const st = s.data;
      if (!st.pending) return;
      const n = s.write(st.pending);
      st.pending = n < st.pending.length ? st.pending.subarray(Math.max(n, 0)) : undefined;
    },
    error(_s: StreamSocket, e: Error) {
      hooks.onStreamError(e.message);
    },
    close(s: StreamSocket) {
      if (!s.data?.leg) return;
      (s.data.leg as { closed: boolean }).closed = true;
      hooks.onStreamClosed(s.data.leg);
    },
  };
}

export interface StreamListener {
  port: number;
  stop(): void;
}

/** A TCP or TLS listener; every accepted connection is its own Leg (answers go back on it). */
export function listenStream(
  ip: string,
  port: number,
  advertised: string,
  kind: "tcp" | "tls",
  tls: { cert: string; key: string } | undefined,
  hooks: TransportHooks,
): StreamListener {
  try {
    const server = Bun.listen<ConnState>({
      hostname: ip,
      port,
      ...(kind === "tls" ? { tls: { cert: Bun.file(tls!.cert), key: Bun.file(tls!.key) } } : {}),
      socket: streamHandlers(advertised, kind, hooks),
    });
    return { port: server.port, stop: () => server.stop(true) };
  } catch (e) {
    throw new LoadgenUsageError(`cannot listen on ${kind} ${ip}:${port}: ${(e as Error).message}`);
  }
}

/**
 * A client connection. TLS does not verify the server certificate: a load generator talks to test
 * systems with self-signed certificates, like sipp (docs/LOADGEN.md "Transports"). `serverName` is
 * the SNI: the host name the remote address was given with; none for an IP address (RFC 6066 §3
 * forbids literal addresses there, and Bun would otherwise send the IP it connects to).
 */
export async function connectStream(
  remote: Peer,
  advertised: string,
  kind: "tcp" | "tls",
  hooks: TransportHooks,
  serverName = "",
): Promise<Leg> {
  const s = await Bun.connect<ConnState>({
    hostname: remote.host,
    port: remote.port,
    ...(kind === "tls" ? { tls: { rejectUnauthorized: false, serverName } } : {}),
    socket: streamHandlers(advertised, kind, hooks),
  });
  return initConn(s, advertised, kind, hooks).leg;
}
