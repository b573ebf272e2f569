/**
 * Clients of the HEP stream listeners for the connection-slot tests (docs/ARCHITECTURE.md "HEP
 * stream connections"): real sockets on loopback, from any source address of 127.0.0.0/8 (every
 * address of it is local on Linux), and the counters and rows they are checked against.
 */
import net from "node:net";
import tls from "node:tls";
import { encodeHep3 } from "../../src/hep/index.ts";
import type { TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { waitFor } from "../harness.ts";

/** A HEP3 INVITE with Call-ID `callId`, stored in hep_proto_1_call. */
export const packet = (callId: string) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 6,
    timestampUs: Date.now() * 1000,
    protoType: 1,
    payload: invite({ callId, from: "a", to: "b" }),
  });

/** A client connection from a source address, with a promise that settles when it is closed. */
export interface Client {
  socket: net.Socket;
  closed: Promise<void>;
  isClosed(): boolean;
}

function track(socket: net.Socket, ready: string): Promise<Client> {
  let closed = false;
  const done = new Promise<void>((resolve) => socket.on("close", () => resolve(void (closed = true))));
  // A connection the server refuses at once may be reset before it is reported ready.
  socket.on("error", () => {});
  const client = { socket, closed: done, isClosed: () => closed };
  return Promise.race([new Promise<void>((resolve) => socket.once(ready, () => resolve())), done]).then(() => client);
}

/** A TCP connection to `port` from source address `from`; settles once connected or closed. */
export const connect = (port: number, from = "127.0.0.1"): Promise<Client> =>
  track(net.connect({ host: "127.0.0.1", port, localAddress: from }), "connect");

/** A TLS connection (self-signed server accepted) from `from`; settles once the handshake is done or the socket closed. */
export function connectTls(port: number, from = "127.0.0.1"): Promise<Client> {
  // localAddress is passed on to the TCP connect (Node's types list it for net only).
  const opts: tls.ConnectionOptions & net.TcpNetConnectOpts = {
    host: "127.0.0.1",
    port,
    localAddress: from,
    rejectUnauthorized: false,
  };
  return track(tls.connect(opts), "secureConnect");
}

/** Connects from `from` and waits until the server has seen the socket (its accept or refusal counted). */
export async function connectSeen(
  a: TestAppliance,
  port: number,
  from: string,
  transport: "tcp" | "tls" = "tcp",
): Promise<Client> {
  const before = seen(a, transport);
  const c = await (transport === "tls" ? connectTls(port, from) : connect(port, from));
  await waitFor(`the server saw the connection from ${from}`, () => seen(a, transport) > before);
  return c;
}

/** Value of counter `name` with exactly `labels` (e.g. `transport="tcp"`); 0 when absent. */
export const counter = (a: TestAppliance, name: string, labels: string): number => {
  const m = new RegExp(`^${name}\\{${labels.replace(/[{}]/g, "\\$&")}\\} (\\d+)$`, "m").exec(a.app.metrics.render());
  return m ? Number(m[1]) : 0;
};

const REFUSALS = ["max_connections", "per_ip_limit", "reserved_for_known"];

/** Connections the server accepted or refused at accept, on `transport`. */
export const seen = (a: TestAppliance, transport: "tcp" | "tls"): number =>
  counter(a, "svc_hep_connections_total", `transport="${transport}"`) +
  REFUSALS.reduce(
    (n, reason) => n + counter(a, "svc_hep_connections_closed_total", `transport="${transport}",reason="${reason}"`),
    0,
  );

/** Whether the INVITE with `callId` is in the lake. */
export async function stored(a: TestAppliance, callId: string): Promise<boolean> {
  await a.app.lake!.sync();
  const r = await a.app.lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`, [
    callId,
  ]);
  return Number(r.rows[0]!.n) === 1;
}

/** Sends one INVITE on `c` and waits until it is stored. */
export async function sendAndStore(a: TestAppliance, c: Client, callId: string): Promise<void> {
  c.socket.write(packet(callId));
  await waitFor(`packet ${callId} stored`, () => stored(a, callId));
}
