/**
 * A small tmpfs for disk-full tests: a real file system that runs out of space (ENOSPC), mounted
 * with `mount -t tmpfs -o size=…` (needs root: CI runs the suite as root). `fill` takes every free
 * byte but `leaveBytes` with a filler file; removing it gives the space back.
 */
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Peer } from "../harness.ts";

function tryMount(dir: string, bytes: number): boolean {
  return (
    Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", dir], {
      stdout: "ignore",
      stderr: "ignore",
    }).exitCode === 0
  );
}

function umount(dir: string): void {
  Bun.spawnSync(["umount", "-l", dir], { stdout: "ignore", stderr: "ignore" });
}

/** Can this process mount a tmpfs (root, mount allowed in this container)? Checked once. */
let mountable: boolean | undefined;
export const TMPFS_PEER: Peer = {
  install: "root and `mount -t tmpfs` (run the tests as root, as CI does)",
  probe: () => {
    if (mountable !== undefined) return mountable;
    if (process.getuid?.() !== 0) return (mountable = false);
    const dir = join(tmpdir(), `svc-tmpfs-probe-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    mountable = tryMount(dir, 1 << 20);
    if (mountable) umount(dir);
    rmSync(dir, { recursive: true, force: true });
    return mountable;
  },
};

export interface Tmpfs extends AsyncDisposable {
  path: string;
  /** Bytes a non-root writer may still use. */
  free(): number;
  /** Writes a filler file that leaves about `leaveBytes` free (page-rounded); returns its path. */
  fill(leaveBytes?: number): string;
}

export function mountTmpfs(dir: string, bytes: number): Tmpfs {
  mkdirSync(dir, { recursive: true });
  if (!tryMount(dir, bytes)) throw new Error(`mount -t tmpfs on ${dir} failed`);
  let fillers = 0;
  const free = () => {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  };
  return {
    path: dir,
    free,
    fill(leaveBytes = 0) {
      const file = join(dir, `filler-${++fillers}`);
      const fd = openSync(file, "w");
      const chunk = Buffer.alloc(64 << 10, 0x5a);
      try {
        for (let want = free() - leaveBytes; want > 0; ) {
          const n = writeSync(fd, chunk, 0, Math.min(chunk.length, want));
          want -= n;
        }
      } catch {
        // ENOSPC: full, which is what leaveBytes = 0 asks for.
      } finally {
        closeSync(fd);
      }
      return file;
    },
    async [Symbol.asyncDispose]() {
      umount(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
