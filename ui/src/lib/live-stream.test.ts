import { describe, expect, test } from "bun:test";
import { retryDelayMs } from "./live-stream.ts";

describe("live view reconnect backoff", () => {
  test.each([
    [0, 0.5, 1000],
    [1, 0.5, 2000],
    [4, 0.5, 16_000],
    [5, 0.5, 30_000],
    [12, 0.5, 30_000],
    [0, 0, 800],
    [0, 1, 1200],
    [9, 1, 30_000],
    [3, 0, 6400],
    [3, 1, 9600],
  ])("try %d with jitter %d waits %d ms", (attempt, random, ms) => {
    expect(retryDelayMs(attempt, random)).toBe(ms);
  });
});
