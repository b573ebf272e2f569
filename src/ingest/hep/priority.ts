import { libc } from "../../core/index.ts";

/**
 * Scheduling priority of the calling thread (Linux: `setpriority(PRIO_PROCESS, 0, nice)` applies
 * to the calling thread only). The HEP ingest thread asks for a higher priority than DuckDB's
 * threads: on a small machine a flush must never keep the socket from being read (the kernel then
 * drops datagrams nobody counts); the flush can wait, the buffer is bounded and counted.
 * Raising priority needs CAP_SYS_NICE (granted by the systemd unit); without it nothing changes.
 */
const PRIO_PROCESS = 0;

/** Sets the calling thread's nice value; returns the value in effect afterwards (undefined: unknown). */
export function setThreadNice(nice: number): number | undefined {
  const l = libc();
  if (!l) return undefined;
  l.setpriority(PRIO_PROCESS, 0, nice);
  return l.getpriority(PRIO_PROCESS, 0);
}
