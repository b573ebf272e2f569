import { ptr } from "bun:ffi";
import { libc } from "../../core/index.ts";

/**
 * SO_RCVBUF on a UDP socket (docs/PLATFORM.md "UDP receive buffer": the buffer decides loss, and
 * Bun.udpSocket has no option for it). SO_RCVBUFFORCE (needs CAP_NET_ADMIN, granted by the
 * systemd unit) ignores net.core.rmem_max; plain SO_RCVBUF is capped by it.
 */
const SOL_SOCKET = 1;
const SO_RCVBUF = 8;
const SO_RCVBUFFORCE = 33;

/** Requests `bytes` of receive buffer; returns the effective size the kernel reports (or undefined). */
export function setReceiveBuffer(fd: number, bytes: number): number | undefined {
  const l = libc();
  if (!l || !Number.isInteger(fd) || fd < 0) return undefined;
  const val = new Int32Array([Math.min(bytes, 0x7fffffff)]);
  if (l.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, ptr(val), 4) !== 0) {
    l.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, ptr(val), 4);
  }
  const out = new Int32Array(1);
  const len = new Uint32Array([4]);
  if (l.getsockopt(fd, SOL_SOCKET, SO_RCVBUF, ptr(out), ptr(len)) !== 0) return undefined;
  // Linux reports twice the requested size (bookkeeping overhead, socket(7)).
  return out[0]! / 2;
}
