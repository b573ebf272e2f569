import { ptr, read } from "bun:ffi";
import { libc, type Libc } from "../../core/index.ts";
import { attachRandomSpread, otherSocketsOnPort, setReusePort } from "./reuseport.ts";
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from "../../core/index.ts";

/**
 * A UDP socket read in batches with recvmmsg(2) through bun:ffi (Linux, 64-bit). Bun's UDP socket
 * delivers one datagram per JS callback with a fresh Uint8Array and about 16 datagrams per
 * recvmmsg; reading up to 64 waiting datagrams per call into one reused buffer costs 7.7 µs per
 * realistic HEP packet in total against 9.2-10.5 µs with Bun's socket at 90 k msgs/s
 * (docs/BENCHMARKS.md "UDP receive"). The socket is non-blocking: the listener polls it from the
 * event loop (udp.ts), so nothing here ever blocks the thread.
 *
 * Only IPv4/IPv6 literals are bound here; the listener keeps Bun's socket for host names.
 */

const AF_INET = 2;
const AF_INET6 = 10;
const SOCK_DGRAM = 2;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const IPPROTO_IPV6 = 41;
const SOL_SOCKET = 1;
/** SO_TIMESTAMPNS (the 64-bit timespec form; the control message type is the same number). */
const SO_TIMESTAMPNS = 35;
const IPV6_V6ONLY = 26;
const EAGAIN = 11;
const EINTR = 4;

/** Datagrams taken per recvmmsg call. */
export const BATCH = 64;
/** One slot per datagram: the largest UDP payload (65 507) fits, so nothing is ever truncated. */
const SLOT = 65536;
/** sockaddr_in6 is 28 bytes; 32 keeps slots aligned. */
const NAME = 32;
/** struct mmsghdr on 64-bit Linux: msghdr (56) + msg_len (4) + padding. */
const MMSG = 64;
/** CMSG_SPACE(sizeof(struct timespec)): cmsghdr (16) + tv_sec (8) + tv_nsec (8). */
const CTRL = 32;

/** libc's functions, or null where batch receive is not available (not Linux, not 64-bit, no libc.so.6). */
function lib(): Libc | null {
  return process.arch === "x64" || process.arch === "arm64" ? libc() : null;
}

export const batchReceiveAvailable = (): boolean => lib() !== null;

/**
 * Closes a descriptor a batch socket opened on a thread that has died (its close() can no longer
 * run there). Only for descriptors known to be still open: a number closed once may be reused.
 */
export function closeOrphanedFd(fd: number): boolean {
  const l = lib();
  return !!l && Number.isInteger(fd) && fd > 2 && l.close(fd) === 0;
}

/** errno values a bind can fail with: code and words. */
const ERRNO: Record<number, [string, string]> = {
  1: ["EPERM", "operation not permitted"],
  13: ["EACCES", "permission denied"],
  22: ["EINVAL", "invalid argument"],
  97: ["EAFNOSUPPORT", "address family not supported"],
  98: ["EADDRINUSE", "address already in use"],
  99: ["EADDRNOTAVAIL", "address not available on this machine"],
};

function errno(l: Libc): number {
  const p = l.__errno_location();
  return p === null ? 0 : read.i32(p, 0);
}

export interface BatchSocket {
  readonly fd: number;
  readonly port: number;
  /**
   * Takes up to BATCH waiting datagrams without blocking: their count (0 when none is waiting), or
   * a negative errno. Their bytes and senders are valid until the next call.
   */
  receive(): number;
  /** Datagram `i` of the last receive (a view into the reused buffer). */
  datagram(i: number): Uint8Array;
  /** Sender address of datagram `i` (IPv4-mapped IPv6 senders in dotted-quad form). */
  sender(i: number): string;
  /**
   * When the kernel received datagram `i` (epoch ms, sub-ms fraction from SO_TIMESTAMPNS), or
   * undefined on a socket that is not shared (no group) or when the kernel gave no time.
   */
  receivedAtMs(i: number): number | undefined;
  close(): void;
}

/** sockaddr for an IP literal, or undefined when `host` is not one. */
function sockaddr(host: string, port: number): { family: number; bytes: Uint8Array } | undefined {
  const v4 = parseIpv4(host);
  if (v4) {
    const b = new Uint8Array(16);
    const v = new DataView(b.buffer);
    v.setUint16(0, AF_INET, true);
    v.setUint16(2, port, false);
    b.set(v4, 4);
    return { family: AF_INET, bytes: b };
  }
  const v6 = host.includes(":") ? parseIpv6(host) : null;
  if (v6) {
    const b = new Uint8Array(28);
    const v = new DataView(b.buffer);
    v.setUint16(0, AF_INET6, true);
    v.setUint16(2, port, false);
    b.set(v6, 8);
    return { family: AF_INET6, bytes: b };
  }
  return undefined;
}

/** One socket of a group of `size` ingest threads sharing a port (docs/ARCHITECTURE.md "Several ingest threads"). */
export interface SocketGroup {
  size: number;
  /** The first socket of the group: the port must be free of every other socket (SO_REUSEPORT would let a same-user process share it). */
  first: boolean;
}

/**
 * A non-blocking UDP socket bound to `host:port`; undefined when batch receive is unavailable or
 * `host` is not an IP literal (the caller then uses Bun's socket). Throws with the reason when the
 * bind fails (address in use, not available, permission). With `group` the socket joins a
 * SO_REUSEPORT group whose program sends each datagram to a random member (reuseport.ts).
 */
export function openBatchSocket(host: string, port: number, group?: SocketGroup): BatchSocket | undefined {
  const l = lib();
  const addr = sockaddr(host, port);
  if (!l || !addr) return undefined;
  const fd = l.socket(addr.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return undefined;
  const fail = (what: string): never => {
    const e = errno(l);
    l.close(fd);
    const [code, text] = ERRNO[e] ?? [`errno ${e}`, `errno ${e}`];
    throw Object.assign(new Error(`${what} ${host}:${port}: ${text}`), { code, errno: e });
  };
  if (addr.family === AF_INET6) {
    // "::" takes IPv4 senders too, as Bun's and Node's sockets do.
    const off = new Int32Array([0]);
    l.setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, ptr(off), 4);
  }
  const shared = group !== undefined && group.size > 1;
  if (shared && !setReusePort(l, fd)) fail("cannot share UDP");
  if (l.bind(fd, ptr(addr.bytes), addr.bytes.length) !== 0) fail("cannot bind UDP");
  if (shared) {
    if (group.first && (otherSocketsOnPort(fd, "udp") ?? 0) > 0) {
      l.close(fd);
      throw Object.assign(
        new Error(`cannot bind UDP ${host}:${port}: address already in use (another socket shares the port)`),
        { code: "EADDRINUSE", errno: 98 },
      );
    }
    if (!attachRandomSpread(l, fd, group.size)) fail("cannot spread UDP over the ingest threads on");
  }
  // Several threads read the port: each datagram's kernel receive time becomes its row id's time,
  // so rows keep the order they arrived in across threads, whenever each thread gets to read them
  // (docs/ARCHITECTURE.md "Several ingest threads", "Order").
  const stamped = shared && l.setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, ptr(new Int32Array([1])), 4) === 0;
  const bound = new Uint8Array(new ArrayBuffer(28));
  const boundLen = new Uint32Array(new ArrayBuffer(4));
  boundLen[0] = 28;
  if (l.getsockname(fd, ptr(bound), ptr(boundLen)) !== 0) fail("cannot read the bound address of UDP");
  const boundPort = new DataView(bound.buffer).getUint16(2, false);

  // The receive vector: BATCH mmsghdr, each with one iovec onto its SLOT of `data` and a NAME slot.
  const data = new Uint8Array(new ArrayBuffer(BATCH * SLOT));
  const names = new Uint8Array(new ArrayBuffer(BATCH * NAME));
  const control = new ArrayBuffer(BATCH * CTRL);
  // 32-bit views only (no BigInt per datagram): cmsg_level, cmsg_type, and the low words of tv_sec
  // (unsigned: good until 2106) and tv_nsec.
  const c32 = new Uint32Array(control);
  const controlAt = BigInt(ptr(control));
  const iov = new BigUint64Array(2 * BATCH);
  const headers = new ArrayBuffer(BATCH * MMSG);
  const h64 = new BigUint64Array(headers);
  const h32 = new Uint32Array(headers);
  const dataAt = BigInt(ptr(data));
  const namesAt = BigInt(ptr(names));
  const iovAt = BigInt(ptr(iov));
  for (let i = 0; i < BATCH; i++) {
    iov[2 * i] = dataAt + BigInt(i * SLOT);
    iov[2 * i + 1] = BigInt(SLOT);
    const h = i * (MMSG / 8);
    h64[h] = namesAt + BigInt(i * NAME); // msg_name
    h32[i * (MMSG / 4) + 2] = NAME; // msg_namelen
    h64[h + 2] = iovAt + BigInt(i * 16); // msg_iov
    h64[h + 3] = 1n; // msg_iovlen
    if (stamped) {
      h64[h + 4] = controlAt + BigInt(i * CTRL); // msg_control
      h64[h + 5] = BigInt(CTRL); // msg_controllen
    }
  }
  const headersAt = ptr(headers);
  // The kernel only sees addresses: everything it reads or writes stays referenced from here until
  // close(), or the collector frees it (the iovecs, referenced by nothing else, were freed under
  // load and recvmmsg answered EFAULT).
  let pinned: unknown[] | undefined = [data, names, iov, headers, control];
  let received = 0;
  let open = true;

  return {
    fd,
    port: boundPort,
    receive() {
      if (!open || !pinned) return -9; // EBADF
      // The kernel wrote each used msg_namelen: give every used slot its full size back.
      for (let i = 0; i < received; i++) h32[i * (MMSG / 4) + 2] = NAME;
      // And msg_controllen (its high word stays 0).
      if (stamped) for (let i = 0; i < received; i++) h32[i * (MMSG / 4) + 10] = CTRL;
      const n = l.recvmmsg(fd, headersAt, BATCH, 0, null);
      if (n >= 0) return (received = n);
      received = 0;
      const e = errno(l);
      return e === EAGAIN || e === EINTR ? 0 : -e;
    },
    datagram(i) {
      const start = i * SLOT;
      return data.subarray(start, start + h32[i * (MMSG / 4) + 14]!);
    },
    sender(i) {
      const at = i * NAME;
      const family = names[at]! | (names[at + 1]! << 8);
      if (family === AF_INET) return formatIpv4(names, at + 4);
      if (family !== AF_INET6) return "";
      // ::ffff:a.b.c.d (an IPv4 sender on a dual-stack socket) reads as the IPv4 address.
      let mapped = names[at + 18] === 0xff && names[at + 19] === 0xff;
      for (let k = 8; mapped && k < 18; k++) mapped = names[at + k] === 0;
      return mapped ? formatIpv4(names, at + 20) : formatIpv6(names, at + 8);
    },
    receivedAtMs(i) {
      if (!stamped || h32[i * (MMSG / 4) + 10]! < CTRL) return undefined;
      const c = i * (CTRL / 4);
      if (c32[c + 2] !== SOL_SOCKET || c32[c + 3] !== SO_TIMESTAMPNS) return undefined;
      return c32[c + 4]! * 1000 + c32[c + 6]! / 1e6;
    },
    close() {
      if (!open) return;
      open = false;
      l.close(fd);
      pinned = undefined;
    },
  };
}
