import { dlopen, FFIType, ptr } from "bun:ffi";

/**
 * The few libc functions svc calls through bun:ffi (Linux, glibc): socket options Bun does not
 * offer (src/ingest/hep/sockopt.ts), the ingest thread's priority (priority.ts) and the batch UDP
 * socket (udp-batch.ts), the SO_REUSEPORT group of several ingest threads (reuseport.ts), a
 * thread's own CPU time (threadCpuSeconds) and read-ahead advice for data files (willNeed).
 * Opened once, on first use; null where there is no libc.so.6.
 */
function open() {
  return dlopen("libc.so.6", {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    getsockname: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    setsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    getsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    recvmmsg: { args: [FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
    setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
    clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    posix_fadvise: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.i32], returns: FFIType.i32 },
  }).symbols;
}

export type Libc = ReturnType<typeof open>;

let symbols: Libc | null | undefined;

export function libc(): Libc | null {
  if (symbols !== undefined) return symbols;
  symbols = null;
  if (process.platform !== "linux") return symbols;
  try {
    symbols = open();
  } catch {
    symbols = null;
  }
  return symbols;
}

const CLOCK_THREAD_CPUTIME_ID = 3;
const timespec = new BigInt64Array(2);

/**
 * CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID), or undefined without libc:
 * how an ingest thread shows it is short of CPU (docs/ARCHITECTURE.md "Several ingest threads").
 */
export function threadCpuSeconds(): number | undefined {
  const l = libc();
  if (l?.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ptr(timespec)) !== 0) return undefined;
  return Number(timespec[0]) + Number(timespec[1]) / 1e9;
}

const POSIX_FADV_WILLNEED = 3;

/**
 * Tells the kernel that bytes [offset, offset + length) of the open file `fd` will be read soon
 * (posix_fadvise WILLNEED): it starts reading them from the disk at once, all such ranges side by
 * side, and returns; a range already in the page cache costs about a microsecond. A reader that
 * advises every page it is about to pread waits for one disk round trip instead of one per page
 * (docs/ARCHITECTURE.md "Read-ahead of pages"). Nothing happens without libc; a refusal is ignored.
 */
export function willNeed(fd: number, offset: number, length: number): void {
  libc()?.posix_fadvise(fd, offset, length, POSIX_FADV_WILLNEED);
}
