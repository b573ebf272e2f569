import { readFileSync, readlinkSync } from "node:fs";

/**
 * Datagrams the kernel dropped for one UDP socket because its receive buffer was full: the
 * `drops` column of /proc/net/udp (udp6 for IPv6 sockets), found by the socket's inode. These are
 * packets the appliance never saw, so no other counter can show them; under a burst they are the
 * first sign that `socket_buffer_bytes` or the CPU is short. Linux only (undefined elsewhere).
 */
export function socketInode(fd: number): number | undefined {
  try {
    const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** A /proc/net table row: local address (hex as the kernel prints it), port, state, inode, drops (UDP). */
export interface ProcSocket {
  address: string;
  port: number;
  state: string;
  inode: number;
  /** The `drops` column of /proc/net/udp(6); undefined in tables without it. */
  drops: number | undefined;
}

/** The rows of /proc/net tables (`/proc/net/udp`, `udp6`, `tcp`, `tcp6`); files that cannot be read are skipped. */
export function procSockets(files: readonly string[]): ProcSocket[] {
  const out: ProcSocket[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !f[1]!.includes(":")) continue;
      const [address, port] = f[1]!.split(":");
      const p = Number.parseInt(port ?? "", 16);
      if (Number.isNaN(p)) continue;
      out.push({
        address: address!,
        port: p,
        state: f[3]!,
        inode: Number(f[9]),
        drops: f.length >= 13 ? Number(f[12]) : undefined,
      });
    }
  }
  return out;
}

/** The cumulative drop count of the socket with `inode`, or undefined when it is not listed. */
export function socketDrops(inode: number): number | undefined {
  return procSockets(["/proc/net/udp", "/proc/net/udp6"]).find((r) => r.inode === inode)?.drops;
}
