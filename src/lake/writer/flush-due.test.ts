import { describe, expect, test } from "bun:test";
import { flushDue, flushGapMs, MIN_FLUSH_GAP_MS, type FlushDueInput } from "./flush-due.ts";

const base: FlushDueInput = {
  rows: 0,
  oldestAgeMs: 0,
  sinceLastFlushMs: Number.POSITIVE_INFINITY,
  batchSize: 10_000,
  flushIntervalMs: 30_000,
  maxBufferedRows: 200_000,
  gapMs: 500,
};

describe('when the writer\'s tick starts a flush (docs/ARCHITECTURE.md "When a flush starts")', () => {
  test("at batch_size rows once the gap since the table's last flush passed, not before", () => {
    expect(flushDue({ ...base, rows: 9_999 })).toBe(false);
    expect(flushDue({ ...base, rows: 10_000 })).toBe(true); // first flush: no gap to wait for
    expect(flushDue({ ...base, rows: 12_000, sinceLastFlushMs: 200 })).toBe(false);
    expect(flushDue({ ...base, rows: 12_000, sinceLastFlushMs: 499 })).toBe(false);
    expect(flushDue({ ...base, rows: 25_000, sinceLastFlushMs: 500 })).toBe(true);
  });

  test("a quarter of max_buffered_rows is flushed without waiting for the gap", () => {
    expect(flushDue({ ...base, rows: 49_999, sinceLastFlushMs: 100 })).toBe(false);
    expect(flushDue({ ...base, rows: 50_000, sinceLastFlushMs: 100 })).toBe(true);
  });

  test("rows that waited flush_interval_sec are flushed whatever their count and the gap", () => {
    expect(flushDue({ ...base, rows: 3, oldestAgeMs: 29_999, sinceLastFlushMs: 0 })).toBe(false);
    expect(flushDue({ ...base, rows: 3, oldestAgeMs: 30_000, sinceLastFlushMs: 0 })).toBe(true);
    expect(flushDue({ ...base, rows: 0, oldestAgeMs: 60_000 })).toBe(false);
  });

  test("the gap is half a second, never longer than flush_interval_sec", () => {
    expect(MIN_FLUSH_GAP_MS).toBe(500);
    expect(flushGapMs(30_000)).toBe(500);
    expect(flushGapMs(50)).toBe(50);
    expect(flushGapMs(30_000, 0)).toBe(0);
  });
});
