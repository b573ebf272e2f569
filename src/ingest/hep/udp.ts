import { formatAddress, parseListen, type Logger, type Module } from "../../core/index.ts";
import type { HepPipeline } from "../pipeline.ts";
import { setReceiveBuffer } from "./sockopt.ts";

export interface UdpListenerOptions {
  listen: string;
  socketBufferBytes: number;
}

export interface BoundListener extends Module {
  port(): number;
}

/** HEP over UDP: one datagram = one packet, handled synchronously in the receive callback. */
export function createUdpListener(pipeline: HepPipeline, opts: UdpListenerOptions, logger: Logger): BoundListener {
  let socket: Bun.udp.Socket<"uint8array"> | undefined;
  let errors = 0;
  // A UDP datagram carries at most 65 507 bytes of payload.
  const scratch = new Uint8Array(new ArrayBuffer(65536));
  return {
    name: "hep-udp",
    async start() {
      const addr = parseListen(opts.listen, "ingest.hep.udp.listen");
      const sock = await Bun.udpSocket({
        hostname: addr.hostname,
        port: addr.port,
        binaryType: "uint8array",
        socket: {
          data(_s, data, _port, address) {
            // Copied into one reused buffer first: the first view (DataView, subarray) of the
            // socket's fresh Uint8Array makes JSC materialise an ArrayBuffer for it, which cost
            // more than this memcpy (≈ 1 µs of 8 per packet, bench/ingest-path.ts). Nothing
            // keeps the packet's bytes past handlePacket (rows copy them).
            scratch.set(data);
            pipeline.handlePacket(scratch.subarray(0, data.length), "udp", address);
          },
          error(_s, err) {
            // ICMP port-unreachable and friends; without a handler each one prints a stack.
            if (errors++ % 1000 === 0) logger.warn("udp socket error", { error: err.message, count: errors });
          },
        },
      });
      socket = sock;
      // `fd` exists at run time but is not in bun-types (checked with Bun 1.4.5).
      const fd = (sock as unknown as { fd?: number }).fd;
      const effective = opts.socketBufferBytes > 0 && fd !== undefined ? setReceiveBuffer(fd, opts.socketBufferBytes) : undefined;
      if (effective !== undefined && effective < opts.socketBufferBytes) {
        logger.warn("UDP receive buffer smaller than requested: bursts may be lost; raise net.core.rmem_max or grant CAP_NET_ADMIN", {
          requested: opts.socketBufferBytes,
          effective,
        });
      }
      logger.info("listening", { module: "hep-udp", address: formatAddress(addr.hostname, sock.port), receive_buffer: effective });
    },
    async stop() {
      socket?.close();
      socket = undefined;
    },
    port: () => socket?.port ?? 0,
  };
}
