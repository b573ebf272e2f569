import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libc, willNeed } from "./index.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-libc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("willNeed advises a range through libc, leaves the bytes as they are, and ignores a refusal", () => {
  const path = join(dir, "data");
  const bytes = Buffer.alloc(64 * 1024, 7);
  writeFileSync(path, bytes);
  const fd = openSync(path, "r");
  try {
    if (process.platform === "linux") {
      // The call itself: 0 from posix_fadvise for a valid range, EBADF (9) for a closed descriptor.
      expect(libc()?.posix_fadvise(fd, 4096, 16384, 3)).toBe(0);
      expect(libc()?.posix_fadvise(-1, 0, 1, 3)).toBe(9);
    }
    willNeed(fd, 4096, 16384);
    willNeed(-1, 0, 1); // refused by the kernel: nothing thrown
    const back = Buffer.alloc(16384);
    readSync(fd, back, 0, back.length, 4096);
    expect(back.equals(bytes.subarray(4096, 4096 + 16384))).toBe(true);
  } finally {
    closeSync(fd);
  }
});
