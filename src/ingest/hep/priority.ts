import { dlopen, FFIType } from "bun:ffi";

/**
 * Scheduling priority of the calling thread (Linux: `setpriority(PRIO_PROCESS, 0, nice)` applies
 * to the calling thread only). The HEP ingest thread asks for a higher priority than DuckDB's
 * threads: on a small machine a flush must never keep the socket from being read (the kernel then
 * drops datagrams nobody counts); the flush can wait, the buffer is bounded and counted.
 * Raising priority needs CAP_SYS_NICE (granted by the systemd unit); without it nothing changes.
 */
const PRIO_PROCESS = 0;

let libc: ReturnType<typeof open> | null | undefined;
function open() {
  return dlopen("libc.so.6", {
    setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
  });
}

/** Sets the calling thread's nice value; returns the value in effect afterwards (undefined: unknown). */
export function setThreadNice(nice: number): number | undefined {
  if (libc === undefined) {
    try {
      libc = open();
    } catch {
      libc = null;
    }
  }
  if (!libc) return undefined;
  libc.symbols.setpriority(PRIO_PROCESS, 0, nice);
  return libc.symbols.getpriority(PRIO_PROCESS, 0);
}
