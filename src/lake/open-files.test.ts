import { afterAll, describe, expect, test } from "bun:test";
import { fstatSync, mkdtempSync, readSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenFiles } from "./open-files.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-open-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function readAll(fd: number): string {
  const b = Buffer.alloc(fstatSync(fd).size);
  readSync(fd, b, 0, b.length, 0);
  return b.toString();
}

/** Whether `fd` is still an open descriptor. */
function isOpen(fd: number): boolean {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

describe("OpenFiles", () => {
  test("keeps a file open between reads and closes it once idle", () => {
    let now = 0;
    const files = new OpenFiles(4, 1000, () => now);
    const a = file("a", "alpha");
    const fd = files.fd(a);
    expect(files.fd(a)).toBe(fd);
    expect(files.stats).toEqual({ opened: 1, reused: 1 });
    expect(readAll(fd)).toBe("alpha");
    // Idle past the bound: the next open of another file closes it.
    now = 1500;
    files.fd(file("b", "beta"));
    expect(isOpen(fd)).toBe(false);
    expect(files.size).toBe(1);
    files.closeAll();
  });

  test("a used file stays open while others come and go; past the bound the least recently used is closed", () => {
    let now = 0;
    const files = new OpenFiles(2, 60_000, () => now);
    const [x, y, z] = ["x", "y", "z"].map((n) => file(n, n));
    const fx = files.fd(x!);
    now = 1;
    const fy = files.fd(y!);
    now = 2;
    files.fd(x!); // x used last: y is the least recently used
    now = 3;
    files.fd(z!);
    expect(isOpen(fy)).toBe(false);
    expect(isOpen(fx)).toBe(true);
    expect(files.size).toBe(2);
    files.closeAll();
    expect(isOpen(fx)).toBe(false);
    expect(files.size).toBe(0);
  });

  test("a file deleted since it was opened still reads as it was; a missing one throws", () => {
    const files = new OpenFiles();
    const gone = file("gone", "kept bytes");
    const fd = files.fd(gone);
    rmSync(gone);
    expect(readAll(files.fd(gone))).toBe("kept bytes");
    expect(files.stats.opened).toBe(1);
    // Dropped: the next use opens the path again, which is gone now.
    files.drop(gone);
    expect(isOpen(fd)).toBe(false);
    expect(() => files.fd(gone)).toThrow();
    files.closeAll();
  });
});
