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

/** The cumulative drop count of the socket with `inode`, or undefined when it is not listed. */
export function socketDrops(inode: number): number | undefined {
  for (const file of ["/proc/net/udp", "/proc/net/udp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
      const f = line.trim().split(/\s+/);
      if (f.length >= 13 && Number(f[9]) === inode) return Number(f[12]);
    }
  }
  return undefined;
}
