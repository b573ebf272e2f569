import { ptr } from "bun:ffi";
import type { Libc } from "../../core/index.ts";
import { procSockets, socketInode } from "./udp-drops.ts";

/**
 * Several ingest threads on one UDP port (docs/ARCHITECTURE.md "Several ingest threads"): each
 * thread binds its own socket with SO_REUSEPORT, and a classic BPF program on the group picks the
 * socket of each datagram at random. The kernel's default pick hashes the flow (addresses and
 * ports), so an agent that sends everything from one address and port would land on one thread;
 * `random % size` spreads even that flow evenly, at no cost in user space. Order across threads is
 * restored by the capture time each packet carries (docs/ARCHITECTURE.md).
 */

const SOL_SOCKET = 1;
const SO_REUSEPORT = 15;
const SO_ATTACH_REUSEPORT_CBPF = 51;

/** Classic BPF opcodes (linux/filter.h). */
const BPF_LD_W_ABS = 0x20;
const BPF_ALU_MOD_K = 0x94;
const BPF_RET_A = 0x16;
/** Ancillary load of a random u32: SKF_AD_OFF (-0x1000) + SKF_AD_RANDOM (56). */
const SKF_AD_RANDOM = (-0x1000 + 56) >>> 0;

/** The program `A = random(); A %= size; return A` as struct sock_filter[3] (8 bytes each). */
export function randomSpreadProgram(size: number): Uint8Array {
  const insns: Array<[number, number]> = [
    [BPF_LD_W_ABS, SKF_AD_RANDOM],
    [BPF_ALU_MOD_K, size],
    [BPF_RET_A, 0],
  ];
  const b = new Uint8Array(8 * insns.length);
  const v = new DataView(b.buffer);
  insns.forEach(([code, k], i) => {
    v.setUint16(i * 8, code, true); // code; jt and jf stay 0
    v.setUint32(i * 8 + 4, k, true);
  });
  return b;
}

/** SO_REUSEPORT on a socket not yet bound: it joins the group of the sockets already on its port. */
export function setReusePort(l: Libc, fd: number): boolean {
  const one = new Int32Array([1]);
  return l.setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, ptr(one), 4) === 0;
}

/**
 * Gives the group of a bound socket the random-spread program (every member sets the same one,
 * so a restarted thread's socket leaves the group as it found it). Indexes past the group's
 * current size (a thread restarting) fall back to the kernel's flow hash.
 */
export function attachRandomSpread(l: Libc, fd: number, size: number): boolean {
  const prog = randomSpreadProgram(size);
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; }: 16 bytes on 64-bit.
  const fprog = new BigUint64Array(2);
  fprog[0] = BigInt(prog.length / 8);
  fprog[1] = BigInt(ptr(prog));
  const ok = l.setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, ptr(fprog), 16) === 0;
  // `prog` must outlive the call: the kernel copies it during setsockopt.
  return ok && prog.length > 0;
}

const anyAddress = (hex: string) => /^0+$/.test(hex);
/** TCP state LISTEN in /proc/net/tcp. */
const TCP_LISTEN = "0A";

/**
 * Other sockets bound to the port of socket `fd` that would share its datagrams or connections:
 * the same port on the same address, or where either is the wildcard. With SO_REUSEPORT the
 * kernel lets a process of the same user join the group silently, so the first thread of a group
 * looks before the others join and refuses a port already in use (a taken port is an error).
 * Undefined where /proc cannot tell (then nothing is refused).
 */
export function otherSocketsOnPort(fd: number, kind: "udp" | "tcp"): number | undefined {
  const inode = socketInode(fd);
  if (inode === undefined) return undefined;
  const rows = procSockets(kind === "udp" ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"]);
  const own = rows.find((r) => r.inode === inode);
  if (!own) return undefined;
  return rows.filter(
    (r) =>
      r.inode !== inode &&
      r.port === own.port &&
      (kind === "udp" || r.state === TCP_LISTEN) &&
      (r.address === own.address || anyAddress(r.address) || anyAddress(own.address)),
  ).length;
}

/**
 * Whether two listening TCP sockets on `port` would share its connections (the same address, or
 * either the wildcard): for a listener whose descriptor Bun does not show, checked while it is
 * the only one of ours on the port.
 */
export function sharedListenPort(port: number): boolean {
  const rows = procSockets(["/proc/net/tcp", "/proc/net/tcp6"]).filter(
    (r) => r.port === port && r.state === TCP_LISTEN,
  );
  for (let i = 0; i < rows.length; i++) {
    for (let j = i + 1; j < rows.length; j++) {
      const a = rows[i]!.address;
      const b = rows[j]!.address;
      if (a === b || anyAddress(a) || anyAddress(b)) return true;
    }
  }
  return false;
}
