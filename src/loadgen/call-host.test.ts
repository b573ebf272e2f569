import { describe, expect, test } from "bun:test";
import { mediaPort } from "./call-host.ts";

describe("media ports of the built-in scenarios", () => {
  test("one even port per call, uac 6000-29998 and uas 30000-53998, cycling after 12000 calls", () => {
    expect([1, 2, 3, 12000, 12001].map((n) => mediaPort("uac", n))).toEqual([6000, 6002, 6004, 29998, 6000]);
    expect([1, 2, 12000, 12001].map((n) => mediaPort("uas", n))).toEqual([30000, 30002, 53998, 30000]);
    const ports = Array.from({ length: 30000 }, (_, i) => [mediaPort("uac", i + 1), mediaPort("uas", i + 1)]).flat();
    expect(ports.every((p) => p % 2 === 0 && p >= 1024 && p + 1 <= 65535)).toBe(true);
  });
});
