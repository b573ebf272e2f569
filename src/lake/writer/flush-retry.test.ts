import { describe, expect, test } from "bun:test";
import {
  CATALOG_FAILED,
  FlushRetry,
  flushFailureReason,
  LOG_EVERY_MS,
  RateLimitedLog,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
} from "./flush-retry.ts";

describe("flushFailureReason", () => {
  test.each([
    [
      "ENOSPC from node:fs",
      Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
      "no_space",
    ],
    [
      "DuckDB COPY on a full disk",
      new Error('IO Error: Could not write file "/x/ducklake-1.parquet": No space left on device'),
      "no_space",
    ],
    ["SQLite full", Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }), "no_space"],
    [
      "quota in the cause",
      new Error("flush failed", { cause: Object.assign(new Error("quota"), { code: "EDQUOT" }) }),
      "no_space",
    ],
    ["DuckDB I/O error", new Error("IO Error: Could not read from file: Input/output error"), "io"],
    ["SQLite I/O error", Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE" }), "io"],
    [
      "DuckDB out of memory (a wide table's flush)",
      new Error("Out of Memory Error: failed to pin block of size 256.0 KiB (953.4 MiB/953.6 MiB used)"),
      "out_of_memory",
    ],
    [
      "the catalog did not answer (PostgreSQL down)",
      Object.assign(new Error("catalog: the commit failed"), {
        code: CATALOG_FAILED,
        cause: new Error("Connection closed"),
      }),
      "catalog",
    ],
    [
      "a full disk under a catalog call stays no_space",
      Object.assign(new Error("catalog: the commit failed"), {
        code: CATALOG_FAILED,
        cause: Object.assign(new Error("full"), { code: "SQLITE_FULL" }),
      }),
      "no_space",
    ],
    ["anything else", new Error("injected commit failure #1"), "other"],
    ["not an Error", "a string", "other"],
  ] as const)("%s", (_label, e, want) => {
    expect(flushFailureReason(e)).toBe(want);
  });
});

describe("FlushRetry", () => {
  test("the delay doubles per failure up to the cap, half of it random, and resets on success", () => {
    const r = new FlushRetry(() => 1);
    let now = 1_000;
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      r.failed(now, "other", 1);
      delays.push(r.retryAtMs - now);
      expect(r.mayAttempt(now)).toBe(false);
      now = r.retryAtMs;
      expect(r.mayAttempt(now)).toBe(true);
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    const low = new FlushRetry(() => 0);
    low.failed(0, "other", 1);
    expect(low.retryAtMs).toBe(RETRY_BASE_MS / 2);
    expect(r.succeeded(0)).toBe(10);
    expect(r.mayAttempt(0)).toBe(true);
    r.failed(now, "other", 1);
    expect(r.retryAtMs - now).toBe(RETRY_BASE_MS);
    expect(RETRY_MAX_MS).toBe(30_000);
  });

  test("lack of space halves the piece down to one spool file; successes double it back to the whole buffer", () => {
    const r = new FlushRetry(() => 0.5);
    expect(r.pieceFiles).toBe(Number.POSITIVE_INFINITY);
    r.failed(0, "no_space", 20);
    expect(r.pieceFiles).toBe(10);
    r.failed(1, "io", 10);
    expect(r.pieceFiles).toBe(5);
    r.failed(2, "out_of_memory", 5);
    expect(r.pieceFiles).toBe(2);
    for (let i = 0; i < 5; i++) r.failed(3 + i, "no_space", r.pieceFiles);
    expect(r.pieceFiles).toBe(1);
    r.succeeded(19);
    expect(r.pieceFiles).toBe(2);
    r.succeeded(17);
    expect(r.pieceFiles).toBe(4);
    r.succeeded(5);
    expect(r.pieceFiles).toBe(Number.POSITIVE_INFINITY);
    // An unexplained failure (not space) keeps the piece: smaller pieces would not help it.
    r.failed(10, "other", 7);
    expect(r.pieceFiles).toBe(Number.POSITIVE_INFINITY);
  });

  test("failures are counted per streak: failingSinceMs stays at the first, success ends it", () => {
    const r = new FlushRetry(() => 0);
    r.failed(0, "no_space", 1);
    for (let t = 100; t <= 1000; t += 100) r.failed(t, "no_space", 1);
    expect(r.failingSinceMs).toBe(0);
    expect(r.streak).toBe(11);
    expect(r.succeeded(0)).toBe(11);
    expect(r.failingSinceMs).toBeUndefined();
  });
});

describe("RateLimitedLog", () => {
  test("logs a condition when it starts, then a summary with the count at most once a minute, per key", () => {
    const log = new RateLimitedLog();
    expect(LOG_EVERY_MS).toBe(60_000);
    expect(log.hit("no_space:/lake", 0)).toEqual({ kind: "first" });
    // Another condition (another file system) is a line of its own.
    expect(log.hit("no_space:/state", 50)).toEqual({ kind: "first" });
    let logged = 0;
    let summaries = 0;
    for (let t = 100; t <= 3 * LOG_EVERY_MS; t += 100) {
      const l = log.hit("no_space:/lake", t);
      if (l?.kind === "summary") {
        summaries++;
        logged += l.failures;
      }
    }
    expect(summaries).toBe(3);
    expect(logged).toBe((3 * LOG_EVERY_MS) / 100);
    expect(log.clearPrefix("no_space:")).toBe(true);
    expect(log.clearPrefix("no_space:")).toBe(false);
    expect(log.hit("no_space:/lake", 5)).toEqual({ kind: "first" });
    log.clear("no_space:/lake");
    expect(log.hit("no_space:/lake", 6)).toEqual({ kind: "first" });
  });
});
